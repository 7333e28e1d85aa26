import { terminalStatuses, type RunError, type RunSnapshot, type RunStatus, type StoredRunEvent } from "@steward/contract";
import type { Principal } from "../domain/principal";
import type { RunReads } from "./read-runs";

/** What a run waits for from a person, as its events last said. */
export type WaitingFor =
  | { readonly kind: "question"; readonly question: string; readonly options: readonly string[] }
  | { readonly kind: "confirmation"; readonly tool_name: string; readonly arguments: string; readonly fingerprint: string | null };

/** A run as an MCP tool answers it (docs/mcp.md): the snapshot's essentials and what it waits for. */
export interface RunOutcome {
  readonly run_id: string;
  readonly state: RunStatus;
  readonly answer: string | null;
  readonly evidence: readonly unknown[];
  readonly error: RunError | null;
  readonly waiting_for: WaitingFor | null;
  /** True when the run has ended or waits for a person: waiting longer would show nothing new. */
  readonly settled: boolean;
}

/** Live wake-ups of a run (the gateway's run feed). */
export interface RunWakeups {
  watch(runId: string, handlers: { onEvent(): void; onDelta(payload: unknown): void }): { ready: Promise<void>; close(): void };
}

export interface FollowOptions {
  /** Called for each stored event read after the first read (new events), in order. */
  readonly onEvent?: (event: StoredRunEvent) => void;
  /** Also report the events of the first read (a run just created: all of them are new). */
  readonly reportFirstRead?: boolean;
  /** Stop waiting (the client cancelled or went away): the outcome as it stands is answered. */
  readonly signal?: AbortSignal;
  /** Longest wait, in ms; 0 reads once. */
  readonly waitMs: number;
}

const AWAITING: readonly RunStatus[] = ["awaiting_input", "awaiting_confirmation"];
const isSettled = (state: RunStatus) => terminalStatuses.includes(state) || AWAITING.includes(state);

/** What the run waits for, from its events in order: the last question or confirmation not yet answered. */
export function waitingOf(events: readonly StoredRunEvent[]): WaitingFor | null {
  let waiting: WaitingFor | null = null;
  for (const e of events) {
    switch (e.type) {
      case "ask_user":
        waiting = { kind: "question", question: e.data.question, options: e.data.options };
        break;
      case "confirmation_required":
        waiting = { kind: "confirmation", tool_name: e.data.tool_name, arguments: e.data.arguments, fingerprint: e.data.fingerprint ?? null };
        break;
      case "input.received":
      case "confirmation.decided":
      case "run.succeeded":
      case "run.failed":
      case "run.cancelled":
        waiting = null;
        break;
      default:
        break;
    }
  }
  return waiting;
}

export function outcomeOf(snapshot: RunSnapshot, events: readonly StoredRunEvent[]): RunOutcome {
  return {
    run_id: snapshot.id,
    state: snapshot.state,
    answer: snapshot.output?.text ?? null,
    evidence: snapshot.output?.evidence ?? [],
    error: snapshot.error,
    waiting_for: AWAITING.includes(snapshot.state) ? waitingOf(events) : null,
    settled: isSettled(snapshot.state),
  };
}

/**
 * Follows a caller's run until it ends or waits for a person, at most `waitMs`: its stored events are read from
 * PostgreSQL in order (each reported once), woken by the run feed, with a re-read every `pollMs` as the safety
 * net (as the event stream does). The caller's ownership is checked by the first read (404 otherwise).
 */
export function createRunFollower(deps: {
  reads: RunReads;
  feed: RunWakeups;
  pollMs?: number;
  /**
   * A slot of the caller's share of held follows (the event streams' shares, docs/streaming.md), or null when the
   * share is full: then the run is read once and answered as it stands (`settled: false` if it goes on).
   */
  holdSlot?: (principal: Principal) => (() => void) | null;
}) {
  const pollMs = deps.pollMs ?? 2000;
  return async function follow(principal: Principal, runId: string, asked: FollowOptions): Promise<RunOutcome> {
    await deps.reads.get(principal, runId);
    const release = asked.waitMs > 0 && deps.holdSlot ? deps.holdSlot(principal) : undefined;
    const options = release === null ? { ...asked, waitMs: 0 } : asked;
    try {
      return await followHeld(principal, runId, options);
    } finally {
      release?.();
    }
  };

  async function followHeld(principal: Principal, runId: string, options: FollowOptions): Promise<RunOutcome> {
    let wake: (() => void) | null = null;
    // A wake-up that came while reading: the next wait is skipped, so it is not lost.
    let woken = false;
    const watch = deps.feed.watch(runId, { onEvent: () => (wake ? wake() : (woken = true)), onDelta: () => undefined });
    const until = Date.now() + options.waitMs;
    const events: StoredRunEvent[] = [];
    let first = true;
    const readNew = async () => {
      for (;;) {
        const page = await deps.reads.events(runId, { after: events.length ? events[events.length - 1].metadata.seq : 0, limit: 500 });
        for (const e of page) {
          events.push(e);
          if (!first || options.reportFirstRead) options.onEvent?.(e);
        }
        if (page.length < 500) break;
      }
      first = false;
    };
    try {
      if (options.waitMs > 0) await watch.ready;
      for (;;) {
        // The snapshot first, then the events: a settled run's events are all stored by the time it reads so.
        const snapshot = await deps.reads.get(principal, runId);
        await readNew();
        if (isSettled(snapshot.state) || options.signal?.aborted || Date.now() >= until) return outcomeOf(snapshot, events);
        if (woken) {
          woken = false;
          continue;
        }
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            options.signal?.removeEventListener("abort", done);
            wake = null;
            resolve();
          };
          const timer = setTimeout(done, Math.max(1, Math.min(pollMs, until - Date.now())));
          options.signal?.addEventListener("abort", done, { once: true });
          wake = done;
        });
      }
    } finally {
      watch.close();
    }
  }
}

export type FollowRun = ReturnType<typeof createRunFollower>;
