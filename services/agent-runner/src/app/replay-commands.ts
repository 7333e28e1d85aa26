import { RunErrorCode, parseMicros, unfoldableError, type RunCommand, type RunState, type StoredRunEvent } from "@steward/contract";

/** A recorded event read as the command of the writer that appended it, with the clock that writer read. */
export interface RecordedCommand {
  readonly command: RunCommand;
  readonly now: bigint;
}

/**
 * The command of a writer other than the loop that `event` records, or null when the loop wrote it: the
 * gateway's queue, answer, decision and cancel (timed by the event's own time), the reaper's 60402 past the
 * deadline and 60406 while the run waits (timed when recorded), the runner's failure of an unfoldable run. The
 * replay decides the command and checks that it gives the recorded events.
 *
 * The reaper's wait is configuration, not recorded: a 60406 is read as `unanswered` with the wait the run had
 * waited by then, so the check is that the run was waiting for the user.
 */
export function commandOf(event: StoredRunEvent, state: RunState): RecordedCommand | null {
  const run = { id: event.metadata.run_id, tenantId: event.metadata.tenant_id };
  const recordedAt = parseMicros(event.metadata.recorded_at);
  switch (event.type) {
    case "run.queued": {
      const d = event.data;
      const deadlineSeconds = Number((parseMicros(d.deadline_at) - parseMicros(d.created_at)) / 1_000_000n);
      const command: RunCommand = {
        kind: "queue",
        run,
        input: d.input,
        mode: d.mode,
        responseLanguage: d.response_language,
        createdBy: d.created_by,
        threadId: d.thread_id,
        elevationSessionId: d.elevation_session_id ?? null,
        mcpSessionId: d.mcp_session_id,
        mcpMode: d.mcp_mode,
        invocation: d.invocation,
        deadlineSeconds,
      };
      return { command, now: parseMicros(d.created_at) };
    }
    case "input.received":
      return { command: { kind: "answer", run, answer: event.data.answer }, now: parseMicros(event.data.answered_at) };
    case "confirmation.decided":
      return { command: { kind: "confirm", run, decision: event.data.decision, channel: event.data.channel }, now: parseMicros(event.data.decided_at) };
    case "run.cancel_requested":
      return { command: { kind: "cancel" }, now: parseMicros(event.data.requested_at) };
    case "run.failed": {
      const { code, message } = event.data.error;
      if (code === RunErrorCode.questionUnanswered && state.awaiting) {
        return { command: { kind: "unanswered", waitMicros: recordedAt - parseMicros(state.awaiting.since) }, now: recordedAt };
      }
      if (code === RunErrorCode.deadlinePassed && state.deadline_at && !state.awaiting && recordedAt >= parseMicros(state.deadline_at)) {
        return { command: { kind: "expire" }, now: recordedAt };
      }
      if (code === unfoldableError.code && message === unfoldableError.message) return { command: { kind: "unfoldable" }, now: recordedAt };
      return null;
    }
    default:
      return null;
  }
}

/** Whether a writer other than the loop appended `event`. */
export const byAnotherWriter = (event: StoredRunEvent, state: RunState): boolean => commandOf(event, state) !== null;
