import type { Pool } from "pg";
import { initialThreadState, type IsoMicros, type ThreadState } from "@steward/contract";
import { inTransaction } from "@steward/platform";
import { appendThreadEvents } from "./append-thread-events";
import { findOwnThreadState, listThreadRunStates } from "./queries";

export interface ForkThreadInput {
  /** The thread forked: it must be the owner's (archived or not). */
  readonly sourceId: string;
  readonly owner: { readonly tenantId: string; readonly userId: string };
  /** The run it is forked at: one of the source's runs as GET lists them (its own inherited ones included). */
  readonly atRunId: string;
  /** The new thread's id, title and creation moment. */
  readonly forkId: string;
  readonly title: string | null;
  readonly at: IsoMicros;
  readonly traceparent?: string;
  /** Recorded with the fork's projection row, as for POST /v1/threads: a key used before meets the unique index. */
  readonly idempotencyKey?: string | null;
  readonly requestHash?: string | null;
}

/** The fork made, or refused: no such thread of the owner, the run not one of its runs, or a run not ended yet. */
export type ForkThreadOutcome = { readonly kind: "forked"; readonly thread: ThreadState } | { readonly kind: "not_found" | "not_in_thread" | "not_ended" };

/**
 * Which runs a fork at `atRunId` inherits: the thread's runs (in order) up to and including it, every one ended
 * (an ended run cannot change, so the fork can name it instead of copying it).
 */
export function forkPoint(
  runs: ReadonlyArray<{ readonly id: string; readonly ended: boolean }>,
  atRunId: string,
): { readonly kind: "at"; readonly inherited: string[] } | { readonly kind: "not_in_thread" | "not_ended" } {
  const at = runs.findIndex((r) => r.id === atRunId);
  if (at < 0) return { kind: "not_in_thread" };
  const upTo = runs.slice(0, at + 1);
  if (upTo.some((r) => !r.ended)) return { kind: "not_ended" };
  return { kind: "at", inherited: upTo.map((r) => r.id) };
}

/**
 * Forks the owner's thread at one of its runs: a new thread whose stream opens with `thread.created` and
 * `thread.forked` (naming the inherited runs), written with its projection in one statement. The source is only
 * read: its events and row are untouched. A refusal writes nothing.
 */
export async function forkThread(pool: Pool, input: ForkThreadInput): Promise<ForkThreadOutcome> {
  return inTransaction(pool, async (client) => {
    const source = await findOwnThreadState(client, input.owner, input.sourceId);
    if (!source) return { kind: "not_found" };
    const point = forkPoint(await listThreadRunStates(client, input.owner, input.sourceId), input.atRunId);
    if (point.kind !== "at") return { kind: point.kind };
    const thread = await appendThreadEvents(client, {
      threadId: input.forkId,
      tenantId: input.owner.tenantId,
      state: initialThreadState,
      events: [
        { type: "thread.created", data: { title: input.title, created_by: input.owner.userId, created_at: input.at } },
        { type: "thread.forked", data: { forked_from: { thread_id: input.sourceId, run_id: input.atRunId }, inherited_run_ids: point.inherited } },
      ],
      traceparent: input.traceparent,
      idempotencyKey: input.idempotencyKey,
      requestHash: input.requestHash,
    });
    return { kind: "forked", thread };
  });
}
