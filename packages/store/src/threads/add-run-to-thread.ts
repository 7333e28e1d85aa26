import type { Pool } from "pg";
import type { ThreadState } from "@steward/contract";
import { inTransaction } from "@steward/platform";
import { appendRunEvents, type AppendRunEventsInput, type AppendRunEventsResult } from "../runs/append-run-events";
import { appendThreadEvents } from "./append-thread-events";
import { findOwnThreadState } from "./queries";

export interface AddRunToThreadInput {
  readonly threadId: string;
  /** Whose thread it must be: the run's creator. */
  readonly owner: { readonly tenantId: string; readonly userId: string };
  /** The new run's first append (its run.queued carries `thread_id`). */
  readonly run: AppendRunEventsInput;
  /** The moment the run was added: its created_at. */
  readonly addedAt: string;
}

/**
 * What became of the run: added (and queued), or refused — no such thread of this owner, archived, a run of it
 * still active — or its Idempotency-Key was used before (the caller answers with that run).
 */
export type AddRunToThreadOutcome =
  | { readonly kind: "added"; readonly run: AppendRunEventsResult; readonly thread: ThreadState }
  | { readonly kind: "not_found" | "archived" | "active_run" | "key_used" };

/**
 * Queues a run in a thread, race-free: one transaction locks the thread's row (so two runs for one thread
 * are decided one after the other, the second seeing the first), checks it takes a run, then appends the
 * run's first events (with its outbox command) and the thread's `thread.run_added`. Nothing is written
 * unless all of it is.
 */
export async function addRunToThread(pool: Pool, input: AddRunToThreadInput): Promise<AddRunToThreadOutcome> {
  return inTransaction(pool, async (client) => {
    const thread = await findOwnThreadState(client, input.owner, input.threadId, { lock: true });
    if (!thread) return { kind: "not_found" };
    // A retry of a create that landed answers with its run, whatever the thread's state is now.
    if (input.run.idempotencyKey) {
      const used = await client.query("SELECT 1 FROM runs WHERE tenant_id = $1 AND created_by = $2 AND idempotency_key = $3", [
        input.owner.tenantId,
        input.owner.userId,
        input.run.idempotencyKey,
      ]);
      if (used.rowCount) return { kind: "key_used" };
    }
    if (thread.status === "archived") return { kind: "archived" };
    const active = await client.query("SELECT 1 FROM runs WHERE thread_id = $1 AND state NOT IN ('succeeded', 'failed', 'cancelled') LIMIT 1", [
      input.threadId,
    ]);
    if (active.rowCount) return { kind: "active_run" };
    const run = await appendRunEvents(client, input.run);
    const next = await appendThreadEvents(client, {
      threadId: input.threadId,
      tenantId: input.owner.tenantId,
      state: thread,
      events: [{ type: "thread.run_added", data: { run_id: input.run.runId, added_at: input.addedAt } }],
      traceparent: input.run.traceparent,
    });
    return { kind: "added", run, thread: next };
  });
}
