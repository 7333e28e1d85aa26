import type { Topology } from "./topology";
import { runProgress } from "../../support/faults/report";
import { noteEffects } from "./note-effects";
import { noteInput } from "./note-model";

/**
 * Creates `count` note runs (note-model.ts: `delayMs` of the model's time before each save_note call) through the gateway, eight clients at a time; resolves their ids in order. Posted
 * one after another on a loaded machine, the first runs could end before the last began. A 503 (the PDP slow
 * to answer a burst) is sent again after its Retry-After, as the API asks of clients: no fault is injected yet,
 * and a refused POST created nothing.
 */
export async function submitRuns(t: Topology, prefix: string, count: number, delayMs: number): Promise<string[]> {
  const ids: string[] = new Array(count);
  let next = 0;
  const client = async () => {
    for (let i = next++; i < count; i = next++) {
      for (let attempt = 1; ; attempt++) {
        const created = await t.http("POST", "/v1/agents/runs", { input: noteInput(`${prefix}-${i}`, delayMs) });
        if (created.status === 201) {
          ids[i] = created.body.id as string;
          break;
        }
        if (created.status !== 503 || attempt === 10) {
          throw new Error(`setup: run ${i} was not created: ${created.status} ${JSON.stringify(created.body)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, count) }, client));
  return ids;
}

/** How far the runs are: started, terminal, and notes saved. */
export const progress = (t: Topology, ids: string[]) => runProgress(t.pool, ids, noteEffects);

/** Runs started per runner (by the run.started event's runner_id). */
export async function startedBy(t: Topology, ids: string[]): Promise<Record<string, number>> {
  const { rows } = await t.pool.query<{ runner: string; runs: number }>(
    `SELECT data->>'runner_id' AS runner, count(*)::int AS runs FROM events
      WHERE stream_id = ANY($1::uuid[]) AND type = 'run.started' GROUP BY 1 ORDER BY 1`,
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.runner, r.runs]));
}
