import { RunErrorCode, canonicalJson, type RunEvent } from "@steward/contract";

/**
 * Whether a recorded event is the one the loop would have appended. Clock readings and the runner's id are
 * not decisions and are not compared; neither is an error's wording. A failure must agree on code,
 * tool_name, cycle_length and step_no (a 60402 recorded without a step, as the loop wrote it before, is
 * accepted).
 */
export function sameDecision(want: RunEvent, got: RunEvent): boolean {
  if (want.type !== got.type) return false;
  switch (want.type) {
    case "run.started":
      return true;
    case "run.failed":
    case "run.cancelled": {
      const a = want.data.error;
      const b = (got as typeof want).data.error;
      // The loop's 60402 named no step before the loop and the reaper shared one deadline rule.
      const sameStep = a.step_no === undefined || a.step_no === b.step_no || (a.code === RunErrorCode.deadlinePassed && b.step_no === undefined);
      return a.code === b.code && a.tool_name === b.tool_name && a.cycle_length === b.cycle_length && sameStep;
    }
    case "run.queued": {
      // A run queued without the elevation reference (before it was recorded) is compared without one.
      const recorded = (got as typeof want).data;
      const wanted = recorded.elevation_session_id === undefined ? { ...want.data, elevation_session_id: undefined } : want.data;
      return canonicalJson(wanted) === canonicalJson(recorded);
    }
    case "run.succeeded":
      return canonicalJson(want.data.output) === canonicalJson((got as typeof want).data.output);
    case "ask_user":
      return canonicalJson({ ...want.data, asked_at: "" }) === canonicalJson({ ...got.data, asked_at: "" });
    case "confirmation_required": {
      // A request recorded before approvals were bound carries no fingerprint; it is compared without one.
      const recorded = (got as typeof want).data;
      const wanted = recorded.fingerprint === undefined ? { ...want.data, fingerprint: undefined } : want.data;
      return canonicalJson({ ...wanted, asked_at: "" }) === canonicalJson({ ...recorded, asked_at: "" });
    }
    default:
      return canonicalJson(want.data) === canonicalJson(got.data);
  }
}

/** A short, readable form of an expected or recorded event (or of what was due) for the report. */
export function describe(event: RunEvent | string | undefined): string {
  if (event === undefined) return "the end of the stream";
  if (typeof event === "string") return event;
  const shown = event.type === "run.failed" || event.type === "run.cancelled" ? event.data.error : event.data;
  const text = `${event.type} ${canonicalJson(shown)}`;
  return text.length > 240 ? `${text.slice(0, 237)}...` : text;
}
