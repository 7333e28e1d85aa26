import type { RunSnapshot } from "@steward/contract";
import type { Command } from "../args";
import { print, type Context } from "../context";
import { ExitCode } from "../exit-codes";
import { followToEnd } from "./follow-output";

type RunCommand = Extract<Command, { name: "run" }>;

/** A run snapshot as the API answers it (SPEC §2). */
export type { RunSnapshot };

/** `steward run "question" [--mode ask] [--follow]`: creates a run; with --follow, renders it to its end. */
export async function runCommand(ctx: Context, cmd: RunCommand): Promise<number> {
  const body = {
    input: cmd.input,
    ...(cmd.mode !== "agent" ? { mode: cmd.mode } : {}),
    ...(cmd.language ? { response_language: cmd.language } : {}),
    ...(cmd.threadId ? { thread_id: cmd.threadId } : {}),
  };
  const headers = cmd.idempotencyKey ? { "idempotency-key": cmd.idempotencyKey } : undefined;
  const run = await ctx.api.request<RunSnapshot>("POST", "/v1/agents/runs", { body, ...(headers ? { headers } : {}) });
  if (!cmd.follow) {
    print(ctx, run, (r) => `run ${ctx.style.bold(r.id)} ${r.state}\nfollow it: steward runs events ${r.id} --follow`);
    return ExitCode.ok;
  }
  if (ctx.globals.json) ctx.stdout.write(`${JSON.stringify({ type: "snapshot", data: run })}\n`);
  else ctx.stdout.write(ctx.style.dim(`run ${run.id}\n`));
  return followToEnd(ctx, run.id);
}
