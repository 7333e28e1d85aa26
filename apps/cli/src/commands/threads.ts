import type { Page, ThreadView } from "@steward/contract";
import type { Command } from "../args";
import { print, table, type Context } from "../context";
import { ExitCode } from "../exit-codes";
import { clip } from "../render";

type ThreadsCommand = Extract<Command, { name: `threads.${string}` }>;

type ThreadSnapshot = ThreadView;
type ThreadPage = Page<ThreadView>;

function showThread(ctx: Context, t: ThreadSnapshot): string {
  const s = ctx.style;
  const out = [`${s.bold(t.id)}  ${t.title ?? s.dim("(no title)")}${t.archived_at ? s.yellow("  archived") : ""}`, `  created   ${t.created_at}`];
  if (t.forked_from) out.push(`  forked    from ${t.forked_from.thread_id} at run ${t.forked_from.run_id}`);
  out.push(`  runs      ${t.run_count}`);
  const runs = t.runs ?? [];
  if (runs.length) {
    out.push("");
    out.push(table([["RUN", "STATE", "CREATED", "INPUT"], ...runs.map((r) => [r.id, r.state, r.created_at, clip(r.input, 60)])]).trimEnd());
  }
  out.push("", s.dim(`continue it: steward run "…" --thread ${t.id}`));
  return out.join("\n");
}

/** `steward threads new|ls|show|fork|archive`: the caller's conversations. */
export async function threadsCommand(ctx: Context, cmd: ThreadsCommand): Promise<number> {
  switch (cmd.name) {
    case "threads.new": {
      const thread = await ctx.api.request<ThreadSnapshot>("POST", "/v1/threads", { body: cmd.title !== undefined ? { title: cmd.title } : {} });
      print(ctx, thread, (t) => `thread ${ctx.style.bold(t.id)} created\nask in it: steward run "…" --thread ${t.id}`);
      return ExitCode.ok;
    }
    case "threads.ls": {
      const page = await ctx.api.request<ThreadPage>("GET", "/v1/threads", { query: { page: cmd.page, page_size: cmd.pageSize } });
      print(ctx, page, (p) => {
        if (p.items.length === 0) return p.page === 1 ? "no threads yet" : `no threads on page ${p.page} (${p.total} in all)`;
        const rows = p.items.map((t) => [t.id, String(t.run_count), t.updated_at, clip(t.title ?? "", 60)]);
        return table([["ID", "RUNS", "UPDATED", "TITLE"], ...rows]) + ctx.style.dim(`page ${p.page}, ${p.items.length} of ${p.total}`);
      });
      return ExitCode.ok;
    }
    case "threads.show": {
      const thread = await ctx.api.request<ThreadSnapshot>("GET", `/v1/threads/${cmd.id}`);
      print(ctx, thread, (t) => showThread(ctx, t));
      return ExitCode.ok;
    }
    case "threads.fork": {
      const body = { at_run_id: cmd.atRunId, ...(cmd.title !== undefined ? { title: cmd.title } : {}) };
      const thread = await ctx.api.request<ThreadSnapshot>("POST", `/v1/threads/${cmd.id}/fork`, { body });
      print(ctx, thread, (t) => `thread ${ctx.style.bold(t.id)} forked from ${cmd.id} at run ${cmd.atRunId}`);
      return ExitCode.ok;
    }
    case "threads.archive": {
      const thread = await ctx.api.request<ThreadSnapshot>("DELETE", `/v1/threads/${cmd.id}`);
      print(ctx, thread, (t) => `archived ${t.id}`);
      return ExitCode.ok;
    }
  }
}
