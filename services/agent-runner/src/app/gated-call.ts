import { nowMicros, ToolResultCode, type RequestedToolCall, type RunEvent, type RunState, type StoredRunEvent } from "@steward/contract";
import type { Logger } from "@steward/platform";
import { gateCall } from "../domain/tool-gate";
import type { RunContext } from "./run-context";
import { controlledResult, runToolStep, shortCircuitResult, type ToolStepDeps } from "./tool-step";

export interface GatedCallInput {
  readonly ctx: RunContext;
  readonly state: RunState;
  readonly events: readonly StoredRunEvent[];
  readonly call: RequestedToolCall;
  readonly shortCircuit: boolean;
  readonly append: (more: RunEvent[]) => Promise<void>;
  readonly log: Logger;
}

/**
 * One pending call through the rules of the loop: it runs, is refused with a structured result, pauses
 * the run for a question or a confirmation, or resumes from the user's answer. Resolves true when the run
 * now waits for the user (the delivery is acknowledged and no runner holds the run).
 */
export async function runGatedCall(deps: ToolStepDeps, input: GatedCallInput): Promise<boolean> {
  const { state, call, append, log } = input;
  if (input.shortCircuit) {
    await append([shortCircuitResult(state, call)]);
    return false;
  }
  const gate = gateCall(state, call, deps.catalog);
  switch (gate.kind) {
    case "invoke":
      await runToolStep(deps, input.ctx, state, input.events, call, append, log);
      return false;
    case "refuse":
      await append([controlledResult(state, call, gate.code, { error_code: gate.code, note: gate.note })]);
      log.info({ step_no: state.step_no, tool: call.tool_name, result_code: gate.code }, "tool call refused");
      return false;
    case "answer":
      await append([controlledResult(state, call, ToolResultCode.ok, { answer: gate.answer })]);
      return false;
    case "ask":
      await append([
        { type: "ask_user", data: { step_no: state.step_no, call_id: call.call_id, question: gate.question, options: gate.options, asked_at: nowMicros() } },
      ]);
      log.info({ step_no: state.step_no }, "asked the user; waiting");
      return true;
    case "request_confirmation":
      await append([
        {
          type: "confirmation_required",
          data: {
            step_no: state.step_no,
            call_id: call.call_id,
            tool_name: call.tool_name,
            arguments: call.arguments,
            asked_at: nowMicros(),
            fingerprint: gate.fingerprint,
          },
        },
      ]);
      log.info({ step_no: state.step_no, tool: call.tool_name }, "confirmation required; waiting");
      return true;
    case "wait":
      return true;
    default: {
      const unreachable: never = gate;
      throw new TypeError(`unknown gate ${JSON.stringify(unreachable)}`);
    }
  }
}
