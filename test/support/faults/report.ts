import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { counterEffects, type SideEffects } from "./side-effects";

// What the fault suites (processes in test/faults, containers in test/containers) share: how far a set of
// runs is, a deliberate outage length, and the one-line report of each fault.

/** Where every fault's report is appended (one JSON line each). */
export const resultsFile = process.env.FAULT_RESULTS_FILE ?? join(tmpdir(), "steward-fault-results.jsonl");

const TERMINAL_SQL = "type IN ('run.succeeded', 'run.failed', 'run.cancelled')";

/** How far the runs are: started, terminal, and side effects done (test_counter's unless `effects` says). */
export async function runProgress(
  pool: pg.Pool,
  ids: string[],
  effects: SideEffects = counterEffects(0),
): Promise<{ started: number; terminal: number; effects: number }> {
  const { rows } = await pool.query<{ started: number; terminal: number }>(
    `SELECT (SELECT count(DISTINCT stream_id) FROM events WHERE stream_id = ANY($1::uuid[]) AND type = 'run.started')::int AS started,
            (SELECT count(DISTINCT stream_id) FROM events WHERE stream_id = ANY($1::uuid[]) AND ${TERMINAL_SQL})::int AS terminal`,
    [ids],
  );
  const done = (await effects.read(pool, ids)).reduce((sum, e) => sum + e.count, 0);
  return { ...rows[0], effects: done };
}

/** Reports one fault: a console line (`[<label>] {...}`) and a JSON line in the results file. */
export function record(report: object, label = "fault report"): void {
  console.log(`[${label}] ${JSON.stringify(report)}`);
  try {
    appendFileSync(resultsFile, `${JSON.stringify({ at: new Date().toISOString(), ...report })}\n`);
  } catch {
    // the console line is the report of record
  }
}

/** A deliberate outage length: the fault's duration, not a wait for something to happen. */
export function outage(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
