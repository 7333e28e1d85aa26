import { ToolResultCode, type RunEvent } from "@steward/contract";
import type { Logger } from "@steward/platform";

/**
 * One info line per event that changes what an operator would look for (no prompt, answer or result text):
 * the run's start and end, each model step, each tool step, pauses for the user. `toolExecCall` names the
 * call whose result came from tool-exec in this decision, and whether tool-exec answered it from its record.
 * `log` is the run's child logger: every line also carries `run_id`, `tenant_id` and `trace_id`.
 */
export function logDecision(log: Logger, events: readonly RunEvent[], toolExecCall?: { callId: string; replayed: boolean }): void {
  for (const e of events) {
    switch (e.type) {
      case "run.started":
        log.info({ step_no: 0 }, "run started");
        break;
      case "run.failed":
        log.info({ step_no: e.data.error.step_no, code: e.data.error.code }, "run failed");
        break;
      case "run.cancelled":
        log.info({}, "run cancelled");
        break;
      case "circuit.opened":
        log.info({ step_no: e.data.step_no, tool: e.data.tool_name }, "tool circuit opened");
        break;
      case "thought":
        log.info({ step_no: e.data.step_no, provider: e.data.provider, tool_calls: e.data.tool_calls.length }, "model step");
        break;
      case "message":
      case "message.truncated":
        log.info({ step_no: e.data.step_no, provider: e.data.provider, answer: e.type }, "model step");
        break;
      case "context.compacted":
        log.info(
          { step_no: e.data.step_no, compacted: e.data.call_ids.length, tokens_before: e.data.tokens_before, tokens_after: e.data.tokens_after },
          "context compacted",
        );
        break;
      case "context.history": {
        const { turns, dropped, tokens, budget_tokens } = e.data;
        log.info({ step_no: 0, turns: turns.length, dropped: dropped.length, tokens, budget_tokens }, "thread history loaded");
        break;
      }
      case "tool_result": {
        const { step_no, tool_name: tool, result_code, decision } = e.data;
        if (toolExecCall?.callId === e.data.call_id) {
          log.info({ step_no, tool, result_code, permit: decision.permit, replayed: toolExecCall.replayed }, "tool step");
        } else if (result_code === ToolResultCode.outcomeUnknown) {
          log.info({ step_no, tool }, "outcome of an interrupted call is unknown");
        } else if (result_code !== ToolResultCode.ok) {
          log.info({ step_no, tool, result_code }, "tool call refused");
        }
        break;
      }
      case "ask_user":
        log.info({ step_no: e.data.step_no }, "asked the user; waiting");
        break;
      case "confirmation_required":
        log.info({ step_no: e.data.step_no, tool: e.data.tool_name }, "confirmation required; waiting");
        break;
      default:
        break;
    }
  }
}
