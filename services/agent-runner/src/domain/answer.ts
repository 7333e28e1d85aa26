import { RunErrorCode, type RunEvent, type RunState } from "@steward/contract";
import type { ModelAnswer } from "./model";

/**
 * The events a model answer becomes: tool calls → a thought; text → the message and success, with the
 * evidence gathered so far; nothing usable → a classified failure, never an empty success.
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
  const text = answer.text.trim();
  if (text.length > 0 && answer.finishReason !== "length") {
    return [
      { type: "message", data: { step_no: stepNo, text: answer.text, usage, provider: answer.provider } },
      { type: "run.succeeded", data: { output: { text: answer.text, evidence: state.evidence }, finished_at: finishedAt } },
    ];
  }
  const error =
    answer.finishReason === "length"
      ? { code: RunErrorCode.modelTruncated, message: "the model's output was truncated", step_no: stepNo }
      : { code: RunErrorCode.outputUnparseable, message: "the model gave no final text", step_no: stepNo };
  return [{ type: "run.failed", data: { error, finished_at: finishedAt } }];
}
