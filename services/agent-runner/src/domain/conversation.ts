import type { RunEvent } from "@steward/contract";
import type { ChatMessage } from "./model";
import { systemPrompt } from "./prompt";

/** What the model sees of a tool result: the code and the controlled result, never a raw error. */
export function toolMessageContent(resultCode: string, result: unknown): string {
  return JSON.stringify({ result_code: resultCode, result });
}

/**
 * Rebuilds the conversation from the run's events alone, so a resumed run asks the model exactly what an
 * uninterrupted one would have asked.
 */
export function conversationOf(events: readonly RunEvent[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const event of events) {
    switch (event.type) {
      case "run.queued":
        messages.push({ role: "system", content: systemPrompt({ responseLanguage: event.data.response_language }) });
        messages.push({ role: "user", content: event.data.input });
        break;
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
          content: toolMessageContent(event.data.result_code, event.data.result),
        });
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
