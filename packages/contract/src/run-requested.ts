import { Type, type Static } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { BusNames } from "./subjects";

/**
 * The `agent.run.requested` command: a reference to a run and nothing else. No roles, grants, prompts or
 * credentials ride on the bus; the runner reads what it needs from the event store.
 */
export const RunRequestedSchema = Type.Object(
  {
    run_id: Type.String({ pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$" }),
    tenant_id: Type.String({ minLength: 1, maxLength: 128 }),
    created_by: Type.String({ minLength: 1, maxLength: 256 }),
    elevation_session_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false },
);

export type RunRequested = Static<typeof RunRequestedSchema>;

const checker = TypeCompiler.Compile(RunRequestedSchema);

export type DecodeResult<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Strict decode: bytes that are not JSON, or an object with an unknown or missing field, are rejected. */
export function decodeRunRequested(bytes: Uint8Array): DecodeResult<RunRequested> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return { ok: false, reason: "payload is not UTF-8 JSON" };
  }
  if (checker.Check(value)) return { ok: true, value };
  const first = checker.Errors(value).First();
  return { ok: false, reason: first ? `${first.path || "/"}: ${first.message}` : "invalid payload" };
}

/**
 * Why a runner is requested, which names the message (`Nats-Msg-Id`: JetStream drops a second publish of the
 * same id within its window). A relay that publishes a row the writer published already must be dropped, and
 * each new request must not be, so each purpose keys the id by what makes its request new.
 */
export type RequestPurpose =
  /** The run was just created: one request per run (`run.requested.<run>`), marked as a new run's. */
  | { readonly kind: "created" }
  /** An answer or a decision handed the run back: keyed by the version that append made the run. */
  | { readonly kind: "handed_back"; readonly version: number }
  /** A stranded run requested again: keyed by when the re-drive requested it, in ms since the epoch. */
  | { readonly kind: "redriven"; readonly requestedAtMs: string }
  /** A deferred run admitted to its tenant's places: keyed by when it was admitted, in ms since the epoch. */
  | { readonly kind: "admitted"; readonly requestedAtMs: string };

/** A runner requested to drive a run: the command and why it is sent. */
export interface RunRequest {
  readonly command: RunRequested;
  readonly purpose: RequestPurpose;
}

/** The header that marks a just-created run's request: the runner asks for its admission first. */
export const NEW_RUN_HEADER = "Steward-New-Run";

/** `agent.run.requested` as written to the outbox and published: subject, message id, payload and headers. */
export interface RunRequestedMessage {
  readonly subject: string;
  /** Becomes `Nats-Msg-Id`: see `RequestPurpose` for why each purpose keys it as it does. */
  readonly msgId: string;
  readonly payload: RunRequested;
  readonly headers: Readonly<Record<string, string>>;
  readonly runId: string;
}

/**
 * The one builder of `agent.run.requested`: the message for `request` on `names`' subject, its id keyed by the
 * request's purpose, and the trace context of the writer's request when it has one.
 */
export function runRequestedMessage(names: BusNames, request: RunRequest, traceparent?: string): RunRequestedMessage {
  const runId = request.command.run_id;
  const { purpose } = request;
  const traced: Record<string, string> = traceparent === undefined ? {} : { traceparent };
  const base = { subject: names.runRequested, payload: request.command, runId };
  switch (purpose.kind) {
    case "created":
      return { ...base, msgId: `run.requested.${runId}`, headers: { "Steward-Run-Id": runId, ...traced, [NEW_RUN_HEADER]: "true" } };
    case "handed_back":
      return { ...base, msgId: `run.requested.${runId}.${purpose.version}`, headers: { "Steward-Run-Id": runId, ...traced } };
    case "redriven":
      return { ...base, msgId: `run.requested.${runId}.${purpose.requestedAtMs}`, headers: { "Steward-Run-Id": runId, ...traced, "Steward-Redrive": "true" } };
    case "admitted":
      return { ...base, msgId: `run.requested.${runId}.${purpose.requestedAtMs}`, headers: { "Steward-Run-Id": runId, ...traced, "Steward-Admitted": "true" } };
    default: {
      const unreachable: never = purpose;
      throw new TypeError(`unknown purpose ${(unreachable as { kind: string }).kind}`);
    }
  }
}
