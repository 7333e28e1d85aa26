import { Type, type Static } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";

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
