import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "../args";
import { repositoryRoot } from "../config";
import type { Context } from "../context";
import { UsageError } from "../errors";
import { ExitCode } from "../exit-codes";

type ReplayCommand = Extract<Command, { name: "replay" }>;

/** `npm start`'s database when DATABASE_URL is unset (infra/local/dependencies.mjs). */
const LOCAL_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/steward";

/** One line of the replay tool's report, as JSON. */
export function replayLine(line: string): Record<string, unknown> | null {
  const summary = /^(\d+) runs replayed: (\d+) same, (\d+) diverged, (\d+) unfinished, (\d+) missing$/.exec(line);
  if (summary) {
    const [, runs, same, diverged, unfinished, missing] = summary.map(Number);
    return { type: "summary", runs, same, diverged, unfinished, missing };
  }
  const run = /^([0-9a-f-]{36}) (?:(missing)|(\S+) (.+))$/.exec(line);
  if (!run) return null;
  return run[2] ? { type: "run", run_id: run[1], verdict: "missing" } : { type: "run", run_id: run[1], recorded_state: run[3], verdict: run[4] };
}

/**
 * `steward replay <id>... | --all-finished [--limit N]`: the runner's replay tool (`npm run replay`), which
 * reads the event store directly (DATABASE_URL), so it runs on a machine that can reach PostgreSQL. Exit 0
 * when every run replays to its recorded end, 1 when one diverged or is unfinished, 4 when it could not run.
 */
export async function replayCommand(ctx: Context, cmd: ReplayCommand): Promise<number> {
  const tool = join(repositoryRoot, "services", "agent-runner", "dist", "replay.js");
  if (!existsSync(tool)) throw new UsageError("the agent-runner is not built yet: run `npm run build` first");
  const args = cmd.allFinished ? ["--all-finished", ...(cmd.limit ? ["--limit", String(cmd.limit)] : [])] : cmd.ids;
  const child = spawn(process.execPath, [tool, ...args], {
    env: { ...ctx.env, DATABASE_URL: ctx.env.DATABASE_URL || LOCAL_DATABASE_URL },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let failed = false;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    if (!ctx.globals.json) ctx.stdout.write(chunk);
    else out += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    if (chunk.includes("replay failed:")) failed = true;
    ctx.stderr.write(chunk);
  });
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? ExitCode.internal)));
  if (ctx.globals.json) {
    for (const line of out.split("\n")) {
      const item = line ? replayLine(line) : null;
      if (item) ctx.stdout.write(`${JSON.stringify(item)}\n`);
    }
  }
  if (failed) return ExitCode.unreachable;
  return code === 0 ? ExitCode.ok : code === 2 ? ExitCode.usage : ExitCode.negative;
}
