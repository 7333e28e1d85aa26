import type { EventPage, Page } from "@steward/contract";
import type { Command } from "../args";
import { print, table, type Context } from "../context";
import type { EventView } from "../event-view";
import { ExitCode } from "../exit-codes";
import { clip, createRenderer, formatArguments } from "../render";
import { followToEnd } from "./follow-output";
import type { RunSnapshot } from "./run";

type RunsCommand = Extract<Command, { name: `runs.${string}` }>;

type RunPage = Page<RunSnapshot>;

/** Every stored event of a run after `after`, all pages; `path` is the event page's route (the admins' has its own). */
export async function allEvents(ctx: Context, runId: string, after = 0, path = `/v1/agents/runs/${runId}/events`): Promise<EventView[]> {
  const events: EventView[] = [];
  for (;;) {
    const page = await ctx.api.request<EventPage>("GET", path, { query: { after, limit: 1000 } });
    events.push(...page.items);
    if (!page.has_more) return events;
    after = page.next_after;
  }
}

/** Stored events: one JSON object per line with --json, else rendered for a person with their sequence numbers. */
export function printEvents(ctx: Context, events: readonly EventView[]): void {
  if (ctx.globals.json) ctx.stdout.write(events.map((e) => `${JSON.stringify(e)}\n`).join(""));
  else {
    const renderer = createRenderer(ctx.style);
    ctx.stdout.write(events.map((e) => `${ctx.style.dim(String(e.seq).padStart(4))} ${renderer.render(e)}`).join(""));
  }
}

function showRun(ctx: Context, r: RunSnapshot): string {
  const s = ctx.style;
  const state = r.state === "succeeded" ? s.green(r.state) : ["failed", "cancelled"].includes(r.state) ? s.red(r.state) : s.yellow(r.state);
  const out = [`${s.bold(r.id)}  ${state}  (${r.mode} mode)`, `  asked     ${clip(r.input, 200)}`, `  created   ${r.created_at}`];
  if (r.finished_at) out.push(`  finished  ${r.finished_at}`);
  if (r.output) {
    out.push("", r.output.text);
    for (const e of r.output.evidence ?? []) out.push(s.dim(`  - ${e.title} (${e.document_id})`));
  }
  if (r.error) out.push(s.red(`  error     ${r.error.code} ${r.error.message}`));
  return out.join("\n");
}

/** The pending confirmation of a run (the last one not yet decided), if any. */
function pendingConfirmation(events: readonly EventView[]): EventView | undefined {
  const last = [...events].reverse().find((e) => e.type === "confirmation_required" || e.type === "confirmation.decided");
  return last?.type === "confirmation_required" ? last : undefined;
}

/** `steward runs ls|show|events|cancel|answer|approve|reject`. */
export async function runsCommand(ctx: Context, cmd: RunsCommand): Promise<number> {
  const path = (id: string, rest = "") => `/v1/agents/runs/${id}${rest}`;
  switch (cmd.name) {
    case "runs.ls": {
      const page = await ctx.api.request<RunPage>("GET", "/v1/agents/runs", { query: { page: cmd.page, page_size: cmd.pageSize } });
      print(ctx, page, (p) => {
        if (p.items.length === 0) return p.page === 1 ? "no runs yet" : `no runs on page ${p.page} (${p.total} in all)`;
        const rows = p.items.map((r) => [r.id, r.state, r.created_at, clip(r.input, 60)]);
        return table([["ID", "STATE", "CREATED", "INPUT"], ...rows]) + ctx.style.dim(`page ${p.page}, ${p.items.length} of ${p.total}`);
      });
      return ExitCode.ok;
    }
    case "runs.show": {
      const run = await ctx.api.request<RunSnapshot>("GET", path(cmd.id));
      print(ctx, run, (r) => showRun(ctx, r));
      return ExitCode.ok;
    }
    case "runs.events": {
      if (cmd.follow) return followToEnd(ctx, cmd.id, cmd.after);
      printEvents(ctx, await allEvents(ctx, cmd.id, cmd.after));
      return ExitCode.ok;
    }
    case "runs.cancel": {
      const run = await ctx.api.request<RunSnapshot>("POST", path(cmd.id, "/cancel"));
      print(ctx, run, (r) => `cancel requested: run ${r.id} is ${r.state}`);
      return ExitCode.ok;
    }
    case "runs.answer": {
      const run = await ctx.api.request<RunSnapshot>("POST", path(cmd.id, "/input"), { body: { answer: cmd.answer } });
      print(ctx, run, (r) => `answered: run ${r.id} is ${r.state}`);
      return ExitCode.ok;
    }
    case "runs.approve":
    case "runs.reject": {
      const decision = cmd.name === "runs.approve" ? "approve" : "reject";
      // Bind the decision to the call shown here, so that a call the model asked for meanwhile is not decided blind.
      const pending = pendingConfirmation(await allEvents(ctx, cmd.id));
      if (pending && !ctx.globals.json)
        ctx.stderr.write(`${decision === "approve" ? "approving" : "rejecting"} ${pending.data.tool_name} ${formatArguments(pending.data.arguments)}\n`);
      const fingerprint = typeof pending?.data.fingerprint === "string" ? pending.data.fingerprint : undefined;
      const run = await ctx.api.request<RunSnapshot>("POST", path(cmd.id, "/confirmation"), { body: { decision, ...(fingerprint ? { fingerprint } : {}) } });
      print(ctx, run, (r) => `${decision === "approve" ? "approved" : "rejected"}: run ${r.id} is ${r.state}`);
      return ExitCode.ok;
    }
  }
}
