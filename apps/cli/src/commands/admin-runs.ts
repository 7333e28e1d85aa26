import type { AdminRunView, Page } from "@steward/contract";
import type { Command } from "../args";
import { print, table, type Context } from "../context";
import { ExitCode } from "../exit-codes";
import { clip } from "../render";
import { allEvents, printEvents } from "./runs";

type AdminCommand = Extract<Command, { name: `admin.${string}` }>;

type AdminRunPage = Page<AdminRunView>;

/** `steward admin runs|show|events`: any user's runs of the tenant, each read written to the audit log. */
export async function adminRunsCommand(ctx: Context, cmd: AdminCommand): Promise<number> {
  switch (cmd.name) {
    case "admin.runs": {
      const query = { page: cmd.page, page_size: cmd.pageSize, ...cmd.filters };
      const page = await ctx.api.request<AdminRunPage>("GET", "/v1/admin/runs", { query });
      print(ctx, page, (p) => {
        if (p.items.length === 0) return p.page === 1 ? "no runs match" : `no runs on page ${p.page} (${p.total} in all)`;
        const rows = p.items.map((r) => [r.id, r.created_by, r.state, r.error ? String(r.error.code) : "", r.created_at, clip(r.input, 50)]);
        return table([["ID", "USER", "STATE", "CODE", "CREATED", "INPUT"], ...rows]) + ctx.style.dim(`page ${p.page}, ${p.items.length} of ${p.total}`);
      });
      return ExitCode.ok;
    }
    case "admin.show": {
      const run = await ctx.api.request<AdminRunView>("GET", `/v1/admin/runs/${cmd.id}`);
      print(ctx, run, (r) => {
        const lines = [
          `${ctx.style.bold(r.id)}  ${r.state}  by ${r.created_by}${r.thread_id ? `  in thread ${r.thread_id}` : ""}`,
          `  asked     ${clip(r.input, 200)}`,
        ];
        if (r.output) lines.push("", r.output.text);
        if (r.error) lines.push(ctx.style.red(`  error     ${r.error.code} ${r.error.message}`));
        return lines.join("\n");
      });
      return ExitCode.ok;
    }
    case "admin.events": {
      printEvents(ctx, await allEvents(ctx, cmd.id, 0, `/v1/admin/runs/${cmd.id}/events`));
      return ExitCode.ok;
    }
  }
}
