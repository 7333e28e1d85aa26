import type { Pool } from "@steward/platform";
import { appendThreadEvents, archiveThread, findOwnThreadState, findThreadByIdempotencyKey, forkThread, listOwnThreads, listThreadRuns } from "@steward/store";
import { IdempotencyKeyUsedError, type ThreadStore } from "../../app/ports";

/** The unique index that refuses a second thread (or fork) of the same caller with the same Idempotency-Key. */
const KEY_USED = { code: "23505", constraint: "threads_idempotency" };

/** Rejects with IdempotencyKeyUsedError when the key's index refused the row; other failures pass as they are. */
async function keyChecked<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    const { code, constraint } = err as { code?: string; constraint?: string };
    if (code === KEY_USED.code && constraint === KEY_USED.constraint) throw new IdempotencyKeyUsedError({ cause: err });
    throw err;
  }
}

/** Threads in PostgreSQL (`threads`, `thread_events`). */
export function createPgThreadStore(pool: Pool): ThreadStore {
  return {
    create: (input) => keyChecked(appendThreadEvents(pool, input)),
    findByIdempotencyKey: (owner, key) => findThreadByIdempotencyKey(pool, owner, key),
    list: (owner, page) => listOwnThreads(pool, owner, page),
    find: (owner, threadId) => findOwnThreadState(pool, owner, threadId),
    runs: (owner, threadId) => listThreadRuns(pool, owner, threadId),
    fork: (input) => keyChecked(forkThread(pool, input)),
    archive: (input) => archiveThread(pool, input),
  };
}
