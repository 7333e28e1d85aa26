import { createHash, randomUUID } from "node:crypto";
import { canonicalJson, initialThreadState, nowMicros, threadSnapshotOf, type RunSnapshot, type ThreadSnapshot } from "@steward/contract";
import { NotFoundError, ValidationError, type Pool } from "@steward/platform";
import { appendThreadEvents, archiveThread, findOwnThreadState, findThreadByIdempotencyKey, listOwnThreads, listThreadRuns } from "@steward/store";
import { checkThreadTitle } from "../domain/thread-request";
import type { Principal } from "../adapters/http/auth";

/** A thread with its runs, oldest first: GET /v1/threads/:id. */
export interface ThreadWithRuns extends ThreadSnapshot {
  readonly runs: RunSnapshot[];
}

/** A caller's threads: creator-only like runs, somebody else's thread is indistinguishable from none (404). */
export interface Threads {
  create(cmd: { principal: Principal; body: { title?: string }; idempotencyKey?: string; traceparent?: string }): Promise<ThreadSnapshot>;
  list(caller: Principal, page: { page: number; pageSize: number }): Promise<{ items: ThreadSnapshot[]; total: number }>;
  get(caller: Principal, threadId: string): Promise<ThreadWithRuns>;
  /** Archives it (once); an archived thread is answered as it is. */
  archive(caller: Principal, threadId: string, traceparent?: string): Promise<ThreadSnapshot>;
}

const UNIQUE_VIOLATION = "23505";
const notFound = () => new NotFoundError("thread not found");
const ownerOf = (caller: Principal) => ({ tenantId: caller.tenantId, userId: caller.userId });

export function createThreads(deps: { pool: Pool; clock?: () => string }): Threads {
  const clock = deps.clock ?? nowMicros;

  /** The thread created first with this key; the same key with another body is refused (as for runs). */
  async function replayed(caller: Principal, key: string, requestHash: string): Promise<ThreadSnapshot | null> {
    const found = await findThreadByIdempotencyKey(deps.pool, ownerOf(caller), key);
    if (!found) return null;
    if (found.requestHash !== requestHash) throw new ValidationError("this Idempotency-Key was already used with a different request");
    return found.snapshot;
  }

  return {
    async create({ principal, body, idempotencyKey, traceparent }) {
      checkThreadTitle(body.title);
      const requestHash = createHash("sha256").update(canonicalJson(body)).digest("hex");
      const id = randomUUID();
      try {
        // One statement; a key used before meets the unique index and nothing of this request is kept.
        const state = await appendThreadEvents(deps.pool, {
          threadId: id,
          tenantId: principal.tenantId,
          state: initialThreadState,
          events: [{ type: "thread.created", data: { title: body.title ?? null, created_by: principal.userId, created_at: clock() } }],
          traceparent,
          idempotencyKey: idempotencyKey ?? null,
          requestHash,
        });
        return threadSnapshotOf(id, state);
      } catch (err) {
        if ((err as { code?: string }).code === UNIQUE_VIOLATION && idempotencyKey) {
          const first = await replayed(principal, idempotencyKey, requestHash);
          if (first) return first;
        }
        throw err;
      }
    },
    list: (caller, page) => listOwnThreads(deps.pool, ownerOf(caller), page),
    async get(caller, threadId) {
      const state = await findOwnThreadState(deps.pool, ownerOf(caller), threadId);
      if (!state) throw notFound();
      const runs = await listThreadRuns(deps.pool, ownerOf(caller), threadId);
      return { ...threadSnapshotOf(threadId, state), runs };
    },
    async archive(caller, threadId, traceparent) {
      const state = await archiveThread(deps.pool, { threadId, owner: ownerOf(caller), at: clock(), traceparent });
      if (!state) throw notFound();
      return threadSnapshotOf(threadId, state);
    },
  };
}
