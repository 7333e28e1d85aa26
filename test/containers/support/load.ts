import type { Topology } from "./topology";
import { counterInput } from "../../support/counter-runs";
import { runProgress } from "../../support/faults/report";

/** Creates `count` counter runs through the gateway, all at once as many clients would; resolves their ids in order. */
export async function submitRuns(t: Topology, prefix: string, count: number, delayMs: number): Promise<string[]> {
  // All at once: posted one after the other on a loaded machine, the first runs could end before the last began.
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const created = await t.http("POST", "/v1/agents/runs", { input: counterInput(`${prefix}-${i}`, delayMs) });
      if (created.status !== 201) throw new Error(`setup: run ${i} was not created: ${created.status} ${JSON.stringify(created.body)}`);
      return created.body.id as string;
    }),
  );
}

/** How far the runs are: started, terminal, and side effects done. */
export const progress = (t: Topology, ids: string[]) => runProgress(t.pool, ids);

/** Runs started per runner (by the run.started event's runner_id). */
export async function startedBy(t: Topology, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await t.pool.query<{ runner: string; runs: number }>(
    `SELECT data->>'runner_id' AS runner, count(*)::int AS runs FROM events
      WHERE stream_id = ANY($1::uuid[]) AND type = 'run.started' GROUP BY 1 ORDER BY 1`,
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.runner, r.runs]));
}
