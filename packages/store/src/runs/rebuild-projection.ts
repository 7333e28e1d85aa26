import type { Pool } from "pg";
import { foldRun } from "@steward/contract";
import { inTransaction } from "@steward/platform";
import { readStream } from "../event-store/read-stream";
import { projectRun } from "./project-run";

/**
 * Rebuilds the runs projection from the event store: every stream is folded and its row upserted through
 * `projectRun`, so the request columns (idempotency key, request hash, last request) of existing rows stay,
 * and leases stay on unfinished runs. Nothing is deleted; a stream that does not open with run.queued is not
 * a run (a thread's, say) and is skipped. One transaction, holding the runs table against writers (readers go on) so that no append can
 * project a newer fold that this rebuild then overwrites with an older one. Resolves with the runs written
 * and the events folded.
 */
export async function rebuildRunsProjection(pool: Pool): Promise<{ runs: number; events: number }> {
  return inTransaction(pool, async (client) => {
    await client.query("LOCK TABLE runs IN EXCLUSIVE MODE");
    const { rows } = await client.query<{ stream_id: string; tenant_id: string }>(
      "SELECT stream_id, tenant_id FROM events WHERE version = 1 AND type = 'run.queued' ORDER BY stream_id",
    );
    let runs = 0;
    let events = 0;
    for (const { stream_id: id, tenant_id: tenantId } of rows) {
      const stream = await readStream(client, id, { limit: 1_000_000 });
      const state = foldRun(stream);
      if (state.status === "new") continue;
      await projectRun(client, { id, tenantId }, state);
      runs++;
      events += stream.length;
    }
    return { runs, events };
  });
}
