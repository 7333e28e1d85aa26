import { createHash } from "node:crypto";
import { canonicalJson, initialThreadState, nowMicros, threadSnapshotOf, type RunSnapshot, type ThreadSnapshot } from "@steward/contract";
import { ConflictError, NotFoundError, ValidationError, timeOrderedId } from "@steward/platform";
import type { ForkThreadOutcome } from "@steward/store";
import { checkForkRequest, checkThreadTitle } from "../domain/thread-request";
import type { Principal } from "../domain/principal";
import { IdempotencyKeyUsedError, type ThreadStore } from "./ports";

/** A thread with its runs, oldest first: GET /v1/threads/:id. A fork's inherited runs come first and are counted. */
export interface ThreadWithRuns extends ThreadSnapshot {
  readonly inherited_run_count: number;
  readonly runs: RunSnapshot[];
}

/** POST /v1/threads/:id/fork: the thread, the run it is forked at, and how the request came. */
export interface ForkThreadCommand {
  readonly principal: Principal;
  readonly threadId: string;
  readonly body: { at_run_id: string; title?: string };
  readonly idempotencyKey?: string;
  readonly traceparent?: string;
}

/** A caller's threads: creator-only like runs, somebody else's thread is indistinguishable from none (404). */
export interface Threads {
  create(cmd: { principal: Principal; body: { title?: string }; idempotencyKey?: string; traceparent?: string }): Promise<ThreadSnapshot>;
  list(caller: Principal, page: { page: number; pageSize: number }): Promise<{ items: ThreadSnapshot[]; total: number }>;
  get(caller: Principal, threadId: string): Promise<ThreadWithRuns>;
  /** A new thread holding the caller's thread's runs up to and including an ended one (docs/threads.md "Fork"). */
  fork(cmd: ForkThreadCommand): Promise<ThreadSnapshot>;
  /** Archives it (once); an archived thread is answered as it is. */
  archive(caller: Principal, threadId: string, traceparent?: string): Promise<ThreadSnapshot>;
}

const notFound = () => new NotFoundError("thread not found");
const ownerOf = (caller: Principal) => ({ tenantId: caller.tenantId, userId: caller.userId });

export function createThreads(deps: { threads: ThreadStore; clock?: () => string }): Threads {
  const clock = deps.clock ?? nowMicros;

  /** The thread created first with this key; the same key with another body is refused (as for runs). */
  async function replayed(caller: Principal, key: string, requestHash: string): Promise<ThreadSnapshot | null> {
    const found = await deps.threads.findByIdempotencyKey(ownerOf(caller), key);
    if (!found) return null;
    if (found.requestHash !== requestHash) throw new ValidationError("this Idempotency-Key was already used with a different request");
    return found.snapshot;
  }

  return {
    async create({ principal, body, idempotencyKey, traceparent }) {
      checkThreadTitle(body.title);
      const requestHash = createHash("sha256").update(canonicalJson(body)).digest("hex");
      const id = timeOrderedId();
      try {
        // One statement; a key used before meets the unique index and nothing of this request is kept.
        const state = await deps.threads.create({
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
        if (err instanceof IdempotencyKeyUsedError && idempotencyKey) {
          const first = await replayed(principal, idempotencyKey, requestHash);
          if (first) return first;
        }
        throw err;
      }
    },
    list: (caller, page) => deps.threads.list(ownerOf(caller), page),
    async get(caller, threadId) {
      const state = await deps.threads.find(ownerOf(caller), threadId);
      if (!state) throw notFound();
      const { inherited, own } = await deps.threads.runs(ownerOf(caller), threadId);
      return { ...threadSnapshotOf(threadId, state), inherited_run_count: inherited.length, runs: [...inherited, ...own] };
    },
    async fork({ principal, threadId, body, idempotencyKey, traceparent }) {
      checkForkRequest(body);
      // The source is part of the request: the same body for another thread is another request.
      const requestHash = createHash("sha256")
        .update(canonicalJson({ fork_of: threadId, ...body }))
        .digest("hex");
      const forkId = timeOrderedId();
      let outcome: ForkThreadOutcome;
      try {
        outcome = await deps.threads.fork({
          sourceId: threadId,
          owner: ownerOf(principal),
          atRunId: body.at_run_id,
          forkId,
          title: body.title ?? null,
          at: clock(),
          traceparent,
          idempotencyKey: idempotencyKey ?? null,
          requestHash,
        });
      } catch (err) {
        if (err instanceof IdempotencyKeyUsedError && idempotencyKey) {
          const first = await replayed(principal, idempotencyKey, requestHash);
          if (first) return first;
        }
        throw err;
      }
      switch (outcome.kind) {
        case "forked":
          return threadSnapshotOf(forkId, outcome.thread);
        case "not_found":
          throw notFound();
        case "not_in_thread":
          throw new ValidationError("at_run_id is not a run of this thread");
        case "not_ended":
          throw new ConflictError("the run at_run_id has not ended: a thread is forked at an ended run");
        default: {
          const unknown: never = outcome;
          throw new TypeError(`unknown outcome ${(unknown as { kind: string }).kind}`);
        }
      }
    },
    async archive(caller, threadId, traceparent) {
      const state = await deps.threads.archive({ threadId, owner: ownerOf(caller), at: clock(), traceparent });
      if (!state) throw notFound();
      return threadSnapshotOf(threadId, state);
    },
  };
}
