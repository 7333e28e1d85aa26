import { status, type ClientDuplexStream, type ServiceError } from "@grpc/grpc-js";
import type { StreamedCall, StreamedReply } from "./call-stream";
import { grpcError } from "./serve";

/**
 * The caller's side of unary calls carried on one long-lived stream (docs/architecture.md, "Call streams";
 * the server's side is `serveCallStream`).
 * A unary call through grpc-js opens an HTTP/2 stream with its headers, metadata, deadline and trailers, and
 * costs both processes several times what the message itself does; on a stream a call is one message each
 * way. Calls go out as they come and are answered in any order, matched by id.
 *
 * What a caller sees is what a unary call gives: the response, or an error with a gRPC `code` and `details`
 * (the server's status for that call; DEADLINE_EXCEEDED when the deadline passes first; UNAVAILABLE, or the
 * stream's own status, when the stream ends with the call unanswered). A new stream is opened on the next call
 * after one ends, on the channel the client has then. A dead peer is found by the channel's keepalive, which
 * ends the stream; until then a call waits out its deadline, as a unary call on the same connection would.
 */
export interface StreamedCalls<Req, Res> {
  /**
   * With `go`, the call is sent held: the server may prepare, but nothing of it takes effect until `go` settles
   * true. Settling false drops it: it is answered CANCELLED here at once, and the server gives it up.
   */
  call(request: Req, options: { deadlineMs?: number; traceparent?: string; go?: Promise<boolean> }): Promise<Res>;
  /** Sends nothing more: the stream ends once the calls on it are answered. */
  close(): void;
}

interface Pending<Res> {
  resolve(response: Res): void;
  reject(err: ServiceError): void;
  timer: NodeJS.Timeout;
}

interface Live<C, Req, Res> {
  readonly client: C;
  readonly stream: ClientDuplexStream<StreamedCall<Req>, StreamedReply<Res>>;
  readonly pending: Map<number, Pending<Res>>;
}

const DEFAULT_DEADLINE_MS = 5000;

/** What a caller gets for a held call it dropped (`go` settled false): nothing of it ran. */
export const droppedCallError = (): ServiceError => grpcError(status.CANCELLED, "the call was dropped before it went on");

/**
 * `current` is the client to open the next stream on (a channel may be replaced: a stream on a replaced one is
 * given up, its calls answered UNAVAILABLE, as grpc-js answers the calls a closed channel held).
 */
export function streamedCalls<C, Req, Res>(
  current: () => C,
  open: (client: C) => ClientDuplexStream<StreamedCall<Req>, StreamedReply<Res>>,
): StreamedCalls<Req, Res> {
  let live: Live<C, Req, Res> | null = null;
  let lastId = 0;
  let closed = false;

  function over(ended: Live<C, Req, Res>, err: ServiceError): void {
    if (live === ended) live = null;
    for (const pending of ended.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(err);
    }
    ended.pending.clear();
  }

  function start(client: C): Live<C, Req, Res> {
    const stream = open(client);
    const opened: Live<C, Req, Res> = { client, stream, pending: new Map() };
    stream.on("data", (reply: StreamedReply<Res>) => {
      const pending = opened.pending.get(reply.id);
      if (!pending) return; // its deadline passed: nobody waits for it
      opened.pending.delete(reply.id);
      clearTimeout(pending.timer);
      if (reply.status && reply.status.code !== status.OK) pending.reject(grpcError(reply.status.code, reply.status.message));
      else if (reply.response === undefined) pending.reject(grpcError(status.INTERNAL, "a reply without a response"));
      else pending.resolve(reply.response);
    });
    stream.on("error", (err: ServiceError) => over(opened, grpcError(err.code ?? status.UNAVAILABLE, err.details ?? err.message)));
    stream.on("end", () => over(opened, grpcError(status.UNAVAILABLE, "the call stream ended before the call was answered")));
    return opened;
  }

  return {
    call(request, options) {
      if (closed) return Promise.reject(grpcError(status.UNAVAILABLE, "the client is closed"));
      const client = current();
      if (live && live.client !== client) {
        const replaced = live;
        over(replaced, grpcError(status.UNAVAILABLE, "the channel was replaced before the call was answered"));
        replaced.stream.cancel();
      }
      const on = live ?? (live = start(client));
      lastId = (lastId + 1) >>> 0;
      const id = lastId;
      const deadlineMs = Math.max(1, Math.round(options.deadlineMs ?? DEFAULT_DEADLINE_MS));
      return new Promise<Res>((resolve, reject) => {
        const timer = setTimeout(() => {
          on.pending.delete(id);
          reject(grpcError(status.DEADLINE_EXCEEDED, "Deadline exceeded"));
        }, deadlineMs);
        on.pending.set(id, { resolve, reject, timer });
        on.stream.write({ id, request, traceparent: options.traceparent ?? "", deadlineMs, held: options.go !== undefined, release: undefined });
        options.go?.then((go) => {
          // Answered already (a deny, a failure), or its stream is gone: the server waits for nothing.
          const pending = on.pending.get(id);
          if (!pending) return;
          // A closed client writes nothing more: the call never goes on (the server drops the held calls of an ended stream).
          const open = live === on;
          if (open) on.stream.write({ id, request: undefined, traceparent: "", deadlineMs: 0, held: false, release: { go } });
          if (go && open) return;
          on.pending.delete(id);
          clearTimeout(pending.timer);
          pending.reject(go ? grpcError(status.UNAVAILABLE, "the client is closed") : droppedCallError());
        });
      });
    },
    close() {
      closed = true;
      const ending = live;
      live = null;
      if (!ending) return;
      if (ending.pending.size === 0) ending.stream.cancel();
      else ending.stream.end();
    },
  };
}
