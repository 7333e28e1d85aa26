import { ValidationError } from "@steward/platform";

/** Counts Unicode code points, not UTF-16 units: "😀" is one character. */
export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** What a run is asked to do: POST /v1/agents/runs's body (adapters/http/schemas.ts checks its shape) or an MCP call's arguments. */
export interface CreateRunRequest {
  readonly input: string;
  readonly response_language?: string;
  /** "agent" (default) or "ask" (read-only tools). */
  readonly mode?: "agent" | "ask";
  /** Continues this thread of the caller's. */
  readonly thread_id?: string;
}

export const INPUT_MAX_CHARS = 4000;
export const LANGUAGE_MAX_CHARS = 35;

/** Content rules of a run request (SPEC §2): the shape is already checked; these are 422/10430. */
export function checkRunContent(body: { input: string; response_language?: string }): void {
  const inputLength = codePointLength(body.input);
  if (inputLength < 1 || inputLength > INPUT_MAX_CHARS) {
    throw new ValidationError(`input must be 1 to ${INPUT_MAX_CHARS} characters`);
  }
  if (body.input.trim().length === 0) throw new ValidationError("input must not be only white space");
  if (body.response_language !== undefined) {
    const n = codePointLength(body.response_language);
    if (n < 1 || n > LANGUAGE_MAX_CHARS) {
      throw new ValidationError(`response_language must be 1 to ${LANGUAGE_MAX_CHARS} characters`);
    }
  }
}
