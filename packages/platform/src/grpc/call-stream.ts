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
  /** Aborts when the caller gives up: its deadline passes, or its stream ends or is cancelled. */
  readonly signal: AbortSignal;
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
 */
export function serveCallStream<Req, Res>(
  streams: CallStreams,
  handle: (request: Req, meta: CallMeta) => Promise<Res>,
  statusOf: (err: unknown, request: Req) => grpc.ServiceError,
): grpc.handleBidiStreamingCall<StreamedCall<Req>, StreamedReply<Res>> {
  return (call) => {
    const inFlight = new Map<number, AbortController>();
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
      if (draining) return refuse(id, grpc.status.UNAVAILABLE, "the server is shutting down");
      if (message.request === undefined) return refuse(id, grpc.status.INVALID_ARGUMENT, "request is required");
      if (inFlight.has(id)) return refuse(id, grpc.status.INVALID_ARGUMENT, `call ${id} is already in flight on this stream`);
      const caller = new AbortController();
      inFlight.set(id, caller);
      const timer = message.deadlineMs > 0 ? setTimeout(() => caller.abort(), message.deadlineMs) : undefined;
      let answer: Promise<Res>;
      try {
        answer = handle(message.request, { traceparent: message.traceparent || undefined, deadlineMs: message.deadlineMs || undefined, signal: caller.signal });
      } catch (err) {
        answer = Promise.reject(err);
      }
      answer
        .then(
          (response) => reply({ id, response, status: undefined }),
          (err: unknown) => {
            const status = statusOf(err, message.request!);
            reply({ id, response: undefined, status: { code: status.code, message: status.details } });
          },
        )
        .finally(() => {
          clearTimeout(timer);
          inFlight.delete(id);
          finishIfDone();
        });
    });
    call.on("end", () => {
      halfClosed = true;
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
