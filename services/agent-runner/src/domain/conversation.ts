import type { ContextHistory, RunEvent, RunState } from "@steward/contract";
import { compactValue } from "./compaction";
import type { ChatMessage } from "./model";
import { languageNote, ledgerNote, systemPrompt } from "./prompt";
import { stepLedger } from "./step-ledger";
import { historyMessages } from "./thread-history";

/** The request appended after an answer cut at the output limit. */
export const CONTINUE_REQUEST = "Continue exactly where you stopped. Do not repeat what you already wrote.";

/** What the model sees of a tool result: the code and the controlled result, never a raw error. */
export function toolMessageContent(resultCode: string, result: unknown): string {
  return JSON.stringify({ result_code: resultCode, result });
}

/**
 * Rebuilds the conversation from the run's events alone, so a resumed run asks the model exactly what an
 * uninterrupted one would have asked. The system prompt is Steward's text for the run's current state; the
 * user's input, the response language and the step ledger (with `state`) follow it as user messages, since
 * they are user text and tool output. In a thread, the recorded history of earlier turns (`context.history`)
 * sits between the system prompt and the input. Compacted tool results show only their key fields.
 */
export function conversationOf(events: readonly RunEvent[], state?: RunState): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const compacted = new Set(state?.compacted_calls ?? []);
  const history = events.find((e): e is ContextHistory => e.type === "context.history");
  for (const event of events) {
    switch (event.type) {
      case "run.queued": {
        messages.push({ role: "system", content: systemPrompt(state?.agent_state) });
        // The thread's earlier turns, as recorded before the first model call, come before this run's input.
        if (history) messages.push(...historyMessages(history.data));
        messages.push({ role: "user", content: event.data.input });
        if (event.data.response_language) messages.push({ role: "user", content: languageNote(event.data.response_language) });
        const ledger = state ? stepLedger(events) : "";
        if (ledger) messages.push({ role: "user", content: ledgerNote(ledger) });
        break;
      }
      case "thought":
        messages.push({
          role: "assistant",
          content: event.data.text || null,
          tool_calls: event.data.tool_calls.map((c) => ({
            id: c.call_id,
            type: "function" as const,
            function: { name: c.tool_name, arguments: c.arguments },
          })),
        });
        break;
      case "tool_result":
        messages.push({
          role: "tool",
          tool_call_id: event.data.call_id,
          content: toolMessageContent(
            event.data.result_code,
            compacted.has(event.data.call_id) ? { compacted: true, ...(compactValue(event.data.result) as object) } : event.data.result,
          ),
        });
        break;
      case "message.truncated":
        messages.push({ role: "assistant", content: event.data.text });
        messages.push({ role: "user", content: CONTINUE_REQUEST });
        break;
      case "message":
        messages.push({ role: "assistant", content: event.data.text });
        break;
      default:
        break;
    }
  }
  return messages;
}
