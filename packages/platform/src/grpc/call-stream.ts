import * as grpc from "@grpc/grpc-js";

/**
 * Unary calls carried on one long-lived bidirectional stream (docs/architecture.md, "Call streams"): each
 * message names a call by an id of the caller's choosing, and its reply carries the same id, in any order.
 * The server side: each call is handled as its unary twin would be, with its trace context and deadline taken
 * from the message instead of the call's metadata.
 */
export interface StreamedCall<Req> {
  readonly id: number;
  readonly request: Req | undefined;
  readonly traceparent: string;
  readonly deadlineMs: number;
  /** Sent before the caller's record of it is durable: nothing of it takes effect until its release. */
  readonly held: boolean;
  /** On a later message (no request): the held call `id` may go on, or is dropped. */
  readonly release: { readonly go: boolean } | undefined;
}

export interface StreamedReply<Res> {
  id: number;
  response: Res | undefined;
  status: { code: number; message: string } | undefined;
}

/** What a handler knows of one call besides its request. */
export interface CallMeta {
  readonly traceparent?: string;
  /** Milliseconds the caller waits for this call, counted from its arrival. */
  readonly deadlineMs?: number;
  /** Aborts when the caller gives up: its deadline passes, its stream ends or is cancelled, or it drops a held call. */
  readonly signal: AbortSignal;
  /**
   * Only on a call sent held, to a handler that prepares while it waits (`preparesHeld`): resolves once the
   * caller lets the call go on, rejects when the caller gives up first. Nothing with an effect may start before.
   */
  readonly released?: Promise<void>;
}

/** The caller gave up on a held call before letting it go on (it dropped it, its deadline passed, or it went away). */
export class CallDroppedError extends Error {
  constructor() {
    super("the caller dropped the call before letting it go on");
    this.name = "CallDroppedError";
  }
}

/** A held call's release: `released` settles once, on the caller's word or when `signal` aborts. */
function releaseOf(signal: AbortSignal): { released: Promise<void>; go(): void } {
  let go!: () => void;
  const released = new Promise<void>((resolve, reject) => {
    go = resolve;
    signal.addEventListener("abort", () => reject(new CallDroppedError()), { once: true });
  });
  released.catch(() => undefined); // a handler that is not waiting yet learns of it from the signal
  return { released, go };
}

interface OpenStream {
  drain(): void;
}

/** The call streams open on one server, so that a shutdown can end each once its calls are answered. */
export class CallStreams {
  private readonly open = new Set<OpenStream>();
  private draining = false;

  add(stream: OpenStream): void {
    this.open.add(stream);
    if (this.draining) stream.drain();
  }

  delete(stream: OpenStream): void {
    this.open.delete(stream);
  }

  /** Takes no new call on any stream; each ends once the calls it has are answered. */
  drain(): void {
    this.draining = true;
    for (const stream of [...this.open]) stream.drain();
  }
}

const byServer = new WeakMap<grpc.Server, CallStreams>();

/** The call streams of `server` (shutdownGrpc drains them before it waits for the server's calls to end). */
export function callStreamsOf(server: grpc.Server): CallStreams {
  let streams = byServer.get(server);
  if (!streams) byServer.set(server, (streams = new CallStreams()));
  return streams;
}

/**
 * The handler of a call stream. `handle` answers one call (its unary twin calls it too); `statusOf` maps what
 * it threw to the status the unary call would have ended with. A call that arrives while the server drains is
 * answered UNAVAILABLE, which callers already take as "try again".
 *
 * A call sent held waits for the caller's release: it is handled only then, or at once with `released` in its
 * meta when the handler `preparesHeld` (it starts what has no effect, and waits for `released` before the rest).
 * A dropped call, or one whose caller gives up first, is answered CANCELLED.
 */
export function serveCallStream<Req, Res>(
  streams: CallStreams,
  handle: (request: Req, meta: CallMeta) => Promise<Res>,
  statusOf: (err: unknown, request: Req) => grpc.ServiceError,
  options: { readonly preparesHeld?: boolean } = {},
): grpc.handleBidiStreamingCall<StreamedCall<Req>, StreamedReply<Res>> {
  return (call) => {
    const inFlight = new Map<number, AbortController>();
    /** The held calls not yet released, by id. */
    const holding = new Map<number, () => void>();
    /** The caller went away (cancelled, its connection dropped): nothing more is written. */
    let gone = false;
    let ended = false;
    let draining = false;
    let halfClosed = false;
    const self: OpenStream = {
      drain() {
        draining = true;
        finishIfDone();
      },
    };
    function finishIfDone(): void {
      if (gone || ended || inFlight.size > 0 || !(draining || halfClosed)) return;
      ended = true;
      streams.delete(self);
      call.end();
    }
    const reply = (message: StreamedReply<Res>): void => {
      if (!gone && !ended) call.write(message);
    };
    const refuse = (id: number, code: grpc.status, message: string): void => reply({ id, response: undefined, status: { code, message } });

    call.on("data", (message: StreamedCall<Req>) => {
      const { id } = message;
      if (message.release) {
        // A call already answered (a deny, a failure) or gone is not waiting for its release: nothing to do.
        const go = holding.get(id);
        holding.delete(id);
        if (go && message.release.go) go();
        else if (go) inFlight.get(id)?.abort();
        return;
      }
      if (draining) return refuse(id, grpc.status.UNAVAILABLE, "the server is shutting down");
      if (message.request === undefined) return refuse(id, grpc.status.INVALID_ARGUMENT, "request is required");
      if (inFlight.has(id)) return refuse(id, grpc.status.INVALID_ARGUMENT, `call ${id} is already in flight on this stream`);
      const caller = new AbortController();
      inFlight.set(id, caller);
      const timer = message.deadlineMs > 0 ? setTimeout(() => caller.abort(), message.deadlineMs) : undefined;
      const meta: CallMeta = { traceparent: message.traceparent || undefined, deadlineMs: message.deadlineMs || undefined, signal: caller.signal };
      const release = message.held ? releaseOf(caller.signal) : null;
      if (release) holding.set(id, release.go);
      const request = message.request;
      let answer: Promise<Res>;
      try {
        // A handler that cannot prepare is called once the held call is released.
        if (!release) answer = handle(request, meta);
        else if (options.preparesHeld) answer = handle(request, { ...meta, released: release.released });
        else answer = release.released.then(() => handle(request, meta));
      } catch (err) {
        answer = Promise.reject(err);
      }
      answer
        .then(
          (response) => reply({ id, response, status: undefined }),
          (err: unknown) => {
            if (err instanceof CallDroppedError) return reply({ id, response: undefined, status: { code: grpc.status.CANCELLED, message: err.message } });
            const status = statusOf(err, request);
            reply({ id, response: undefined, status: { code: status.code, message: status.details } });
          },
        )
        .finally(() => {
          clearTimeout(timer);
          inFlight.delete(id);
          holding.delete(id);
          finishIfDone();
        });
    });
    call.on("end", () => {
      halfClosed = true;
      // No release can come any more: the calls still held are dropped.
      for (const id of holding.keys()) inFlight.get(id)?.abort();
      holding.clear();
      finishIfDone();
    });
    const lost = (): void => {
      if (gone) return;
      gone = true;
      streams.delete(self);
      for (const caller of inFlight.values()) caller.abort();
    };
    call.on("cancelled", lost);
    call.on("error", lost);
    streams.add(self);
  };
}
