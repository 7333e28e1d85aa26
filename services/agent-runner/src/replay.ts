import { parseArgs } from "node:util";
import type { Pool } from "@steward/platform";
import { readStream } from "@steward/store";
import { replayRun, type ReplayReport } from "./app/replay-run";
import { runCli, UsageError } from "./cli";

const USAGE = [
  "usage: npm run replay -- <run_id> [<run_id>...]",
  "       npm run replay -- --all-finished [--limit N]",
  "Re-drives finished runs from their events alone (no model, no tools) and reports whether each reaches",
  "its recorded final state. Exit code 0 when every run is the same, 1 otherwise, 2 on a usage error.",
].join("\n");

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parseCommandLine(argv: string[]): { runIds: string[] } | { allFinished: true; limit: number | null } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { "all-finished": { type: "boolean" }, limit: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) throw new UsageError("");
  if (values["all-finished"]) {
    if (positionals.length > 0) throw new UsageError("give run ids or --all-finished, not both");
    const limit = values.limit === undefined ? null : Number(values.limit);
    if (limit !== null && (!Number.isInteger(limit) || limit < 1)) throw new UsageError("--limit must be a positive integer");
    return { allFinished: true, limit };
  }
  if (values.limit !== undefined) throw new UsageError("--limit goes with --all-finished");
  if (positionals.length === 0) throw new UsageError("no run id given");
  const bad = positionals.find((id) => !UUID.test(id));
  if (bad) throw new UsageError(`not a run id: ${bad}`);
  return { runIds: positionals.map((id) => id.toLowerCase()) };
}

/** Runs whose stream holds a terminal event, in the order they finished; read from the event store, not the projection. */
async function finishedRunIds(pool: Pool, limit: number | null): Promise<string[]> {
  const { rows } = await pool.query<{ stream_id: string }>(
    `SELECT stream_id FROM events WHERE type IN ('run.succeeded', 'run.failed', 'run.cancelled')
      GROUP BY stream_id ORDER BY min(global_position) LIMIT $1`,
    [limit],
  );
  return rows.map((r) => r.stream_id);
}

function verdict(report: ReplayReport): string {
  if (!report.finished) return "unfinished";
  if (report.sameFinalState) return "same";
  return report.divergence ? `DIVERGED at seq ${report.divergence.seq}` : "DIVERGED";
}

/** Replays each run and prints one line per run and a summary; 0 when every run is the same. */
async function replay(pool: Pool, command: ReturnType<typeof parseCommandLine>): Promise<number> {
  const runIds = "runIds" in command ? command.runIds : await finishedRunIds(pool, command.limit);
  const counts = { same: 0, diverged: 0, unfinished: 0, missing: 0 };
  for (const runId of runIds) {
    const events = await readStream(pool, runId, { limit: 1_000_000 });
    if (events.length === 0) {
      counts.missing++;
      process.stdout.write(`${runId} missing\n`);
      continue;
    }
    const report = replayRun(events);
    const said = verdict(report);
    process.stdout.write(`${runId} ${report.recordedState.status} ${said}\n`);
    if (said === "same") counts.same++;
    else if (said === "unfinished") counts.unfinished++;
    else counts.diverged++;
    if (report.divergence) {
      process.stderr.write(`${runId} seq ${report.divergence.seq}\n  expected: ${report.divergence.expected}\n  recorded: ${report.divergence.actual}\n`);
    }
  }
  process.stdout.write(
    `${runIds.length} runs replayed: ${counts.same} same, ${counts.diverged} diverged, ${counts.unfinished} unfinished, ${counts.missing} missing\n`,
  );
  return counts.same === runIds.length ? 0 : 1;
}

runCli("replay", USAGE, parseCommandLine, replay);
