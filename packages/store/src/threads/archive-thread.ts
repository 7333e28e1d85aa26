import type { Pool } from "pg";
import type { ThreadState } from "@steward/contract";
import { inTransaction } from "@steward/platform";
import { appendThreadEvents } from "./append-thread-events";
import { findOwnThreadState } from "./queries";

/**
 * Archives the owner's thread (its row locked against a run being added meanwhile): `thread.archived` once;
 * a thread archived already is answered as it is, nothing recorded. Null when the owner has no such thread.
 */
export async function archiveThread(
  pool: Pool,
  input: { threadId: string; owner: { tenantId: string; userId: string }; at: string; traceparent?: string },
): Promise<ThreadState | null> {
  return inTransaction(pool, async (client) => {
    const thread = await findOwnThreadState(client, input.owner, input.threadId, { lock: true });
    if (!thread || thread.status === "archived") return thread;
    return appendThreadEvents(client, {
      threadId: input.threadId,
      tenantId: input.owner.tenantId,
      state: thread,
      events: [{ type: "thread.archived", data: { archived_by: input.owner.userId, archived_at: input.at } }],
      traceparent: input.traceparent,
    });
  });
}
