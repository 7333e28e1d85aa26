import { Limits, RunErrorCode, type RunEvent, type RunState } from "@steward/contract";
import type { ModelAnswer } from "./model";

/**
 * The events a model answer becomes: tool calls → a thought; text → the message and success, with the
 * evidence gathered so far; a length stop with text → kept, and the model asked to continue (at most
 * twice); nothing usable → a classified failure, never an empty success.
 */
export function eventsForAnswer(state: RunState, stepNo: number, answer: ModelAnswer, finishedAt: string): RunEvent[] {
  const usage = answer.usage;
  if (answer.toolCalls.length > 0) {
    return [
      {
        type: "thought",
        data: {
          step_no: stepNo,
          text: answer.text,
          tool_calls: answer.toolCalls.map((c) => ({ call_id: c.id, tool_name: c.name, arguments: c.arguments })),
          usage,
          provider: answer.provider,
        },
      },
    ];
  }
  const hasText = answer.text.trim().length > 0;
  if (answer.finishReason === "length" && hasText && state.continuations < Limits.maxAutoContinuations) {
    return [
      { type: "message.truncated", data: { step_no: stepNo, text: answer.text, usage, provider: answer.provider, continuation: state.continuations + 1 } },
    ];
  }
  const text = state.partial_text + answer.text;
  if (text.trim().length > 0) {
    return [
      { type: "message", data: { step_no: stepNo, text, usage, provider: answer.provider } },
      { type: "run.succeeded", data: { output: { text, evidence: state.evidence }, finished_at: finishedAt } },
    ];
  }
  const error =
    answer.finishReason === "length"
      ? { code: RunErrorCode.modelTruncated, message: "the model's output was truncated", step_no: stepNo }
      : { code: RunErrorCode.outputUnparseable, message: "the model gave no final text", step_no: stepNo };
  return [{ type: "run.failed", data: { error, finished_at: finishedAt } }];
}
