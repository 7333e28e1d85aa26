/**
 * Why a publish failed, as the relay must treat it (settle-batch.ts):
 * - `outage`: the bus is away or unwell (disconnected, a timeout, no stream answering, JetStream 5xx). Nothing
 *   is wrong with the message: it and its run's later messages are tried again later, in order, uncounted.
 * - `refused`: NATS refused this message (over the payload maximum, a bad subject or header, a JetStream 4xx
 *   such as "message size exceeds maximum allowed"). It is retried a bounded number of times, then set aside;
 *   other runs' messages go on meanwhile.
 */
export type PublishFailure =
  /** `noResponders`: no stream answered for the subject (none provisioned yet, or none takes that subject). */
  { readonly kind: "outage"; readonly noResponders: boolean } | { readonly kind: "refused"; readonly reason: string };

/** Errors the NATS client raises before sending: the message itself is invalid for this server. */
const CLIENT_REFUSALS = new Set(["InvalidArgumentError", "InvalidSubjectError", "InvalidHeaderError"]);

const REASON_MAX_CHARS = 500;

function reasonOf(text: string): string {
  return text.length > REASON_MAX_CHARS ? `${text.slice(0, REASON_MAX_CHARS)}…` : text;
}

/** Classifies a rejected publish (`StreamPublisher`); anything not known to be about the message counts as an outage. */
export function classifyPublishError(err: unknown): PublishFailure {
  const e = err as { name?: unknown; message?: unknown; code?: unknown; status?: unknown } | null;
  const name = typeof e?.name === "string" ? e.name : "";
  const message = typeof e?.message === "string" ? e.message : "";
  if (CLIENT_REFUSALS.has(name)) return { kind: "refused", reason: reasonOf(`the NATS client refused it: ${message}`) };
  if (name === "JetStreamApiError") {
    // The API error's `status` is HTTP-like: 4xx is about the request, 5xx about the server (leader election, storage).
    const status = typeof e?.status === "number" ? e.status : 0;
    if (status >= 400 && status < 500) {
      return { kind: "refused", reason: reasonOf(`JetStream refused it (${status}, err_code ${String(e?.code)}): ${message}`) };
    }
  }
  // No stream took the subject (the stream publisher's NoStreamError).
  return { kind: "outage", noResponders: name === "NoStreamError" };
}

/** The bus is away (not a refusal, not a stream without a leader): nothing more is worth sending now. */
export function busAway(failure: PublishFailure | null): boolean {
  return failure?.kind === "outage" && !failure.noResponders;
}
