import { addSeconds, formatMicros } from "../time";
import type { QueueRun } from "./commands";
import type { RunDecision } from "./decision";
import type { RunState } from "./fold";
import { requestRun } from "./run-request";

/** A new run: `run.queued` with its deadline, and a runner requested for it. A run is queued once. */
export function decideQueue(command: QueueRun, state: RunState, now: bigint): RunDecision {
  if (state.status !== "new") return { events: [], commands: [], effect: { kind: "refused", reason: "the run exists already" } };
  const createdAt = formatMicros(now);
  return {
    events: [
      {
        type: "run.queued",
        data: {
          input: command.input,
          mode: command.mode,
          response_language: command.responseLanguage,
          created_by: command.createdBy,
          created_at: createdAt,
          deadline_at: addSeconds(createdAt, command.deadlineSeconds),
          thread_id: command.threadId,
          elevation_session_id: command.elevationSessionId,
          ...(command.mcpSessionId ? { mcp_session_id: command.mcpSessionId } : {}),
          ...(command.mcpMode ? { mcp_mode: command.mcpMode } : {}),
          ...(command.invocation ? { invocation: command.invocation } : {}),
        },
      },
    ],
    commands: [requestRun({ ...command.run, createdBy: command.createdBy, elevationSessionId: command.elevationSessionId }, { kind: "created" })],
    effect: { kind: "append" },
  };
}
