import type { FastifyReply, FastifyRequest } from "fastify";
import { Limits, RunErrorCode, type StoredRunEvent } from "@steward/contract";
import type { RunFeed } from "../../nats/run-feed";
import { eventItemOf } from "../../../app/read-runs";

const TERMINAL = new Set(["run.succeeded", "run.failed", "run.cancelled"]);

/**
 * The seed's summary events a stored event implies (SPEC §2): a failed run's `error` (the run's error, as the
 * snapshot shows it), preceded by `iteration_limit` when the step budget ended it. Sent just before the event
 * they come from, without an id (they are not stored): a stream resumed before that event repeats them with it.
 */
function derivedEvents(event: StoredRunEvent): Array<{ readonly event: string; readonly data: unknown }> {
  if (event.type !== "run.failed") return [];
  const error = event.data.error;
  const derived: Array<{ event: string; data: unknown }> = [];
  if (error.code === RunErrorCode.stepBudgetSpent) derived.push({ event: "iteration_limit", data: { ...error, limit: Limits.stepBudget } });
  derived.push({ event: "error", data: error });
  return derived;
}

export interface EventStreamOptions {
  /** Interval of keep-alive comments, in ms. Default 15 000. */
  keepAliveMs?: number;
  /** Safety-net re-read of PostgreSQL while nothing arrives, in ms. Default 2000. */
  pollMs?: number;
}

/** The SSE event names the stream may send besides the stored event types (SPEC §2). */
export const STREAM_ONLY_EVENTS = ["message.delta", "iteration_limit", "error"] as const;

/** What the stream reads: the run's stored events, the live feed, and whether the run has finished (its projection). */
export interface EventStreamDeps {
  /** The run's stored events after a sequence number, in order, at most `limit`. */
  readonly readEvents: (after: number, limit: number) => Promise<StoredRunEvent[]>;
  readonly feed: RunFeed;
  /** True once the run is terminal; its events are all stored by then (one transaction). */
  readonly finished: () => Promise<boolean>;
}

/**
 * Streams a run's events as Server-Sent Events: history from PostgreSQL after `after`, then live. Every
 * stored event is read from PostgreSQL in sequence order, whatever woke the stream, so a client resuming
 * with Last-Event-ID gets each later event exactly once, across any runner crash. Token deltas are
 * forwarded as they stream (no id: they are not stored), and so are the summary events of `derivedEvents`.
 * The stream ends after the terminal event, and at once when a finished run is resumed at or past its end.
 */
export async function streamRunEvents(
  deps: EventStreamDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  runId: string,
  after: number,
  options: EventStreamOptions = {},
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  let lastSent = after;
  let closed = false;
  let reading: Promise<void> | null = null;
  let again = false;
  let open = false;
  const watch = deps.feed.watch(runId, {
    onEvent: () => {
      if (open) wake();
    },
    onDelta: (payload) => {
      if (open && !closed) res.write(`event: message.delta\ndata: ${JSON.stringify(payload)}\n\n`);
    },
  });
  const unwatch = () => watch.close();
  // Live deltas are not stored: subscribe before the client sees the stream open, so none after it is lost.
  await watch.ready;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.write("retry: 1000\n\n");

  const finish = () => {
    if (closed) return;
    closed = true;
    unwatch();
    clearInterval(keepAlive);
    clearInterval(poll);
    res.end();
  };

  const drain = async (): Promise<void> => {
    // Set once the run was seen finished: the next read then holds every event left, so nothing will follow.
    let settled = false;
    while (!closed) {
      const events = await deps.readEvents(lastSent, 500);
      for (const e of events) {
        for (const d of derivedEvents(e)) res.write(`event: ${d.event}\ndata: ${JSON.stringify(d.data)}\n\n`);
        const item = eventItemOf(e);
        res.write(`id: ${item.seq}\nevent: ${item.type}\ndata: ${JSON.stringify(item)}\n\n`);
        lastSent = item.seq;
        if (TERMINAL.has(e.type)) return finish();
      }
      if (events.length === 500) continue;
      // Resumed at or past the terminal event: there is nothing more to wait for.
      if (settled) return finish();
      if (events.length > 0 || !(await deps.finished())) return;
      settled = true;
    }
  };

  /** Coalesces wake-ups: one read at a time, and one more if woken meanwhile. */
  function wake(): void {
    if (closed) return;
    if (reading) {
      again = true;
      return;
    }
    reading = (async () => {
      do {
        again = false;
        await drain();
      } while (again && !closed);
    })()
      .catch((err: unknown) => {
        request.log.warn({ err, run_id: runId }, "event stream read failed");
        finish();
      })
      .finally(() => (reading = null));
  }

  const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), options.keepAliveMs ?? 15_000);
  const poll = setInterval(wake, options.pollMs ?? 2000);
  request.raw.on("close", finish);
  open = true;
  wake();
}

/** Where a stream resumes: `Last-Event-ID` wins over `?after`. */
export function resumePoint(lastEventId: string | string[] | undefined, after: string | undefined): number | null {
  const raw = typeof lastEventId === "string" && lastEventId !== "" ? lastEventId : (after ?? "0");
  return /^(0|[1-9][0-9]{0,8})$/.test(raw) ? Number(raw) : null;
}
