import type { ChatMessage, ModelAnswer, ModelProvider, ModelRequest } from "../../domain/model";
import { ownInputOf } from "../../domain/thread-history";

/** Rough token count for the demo model's usage figures: one token per four characters. */
function approxTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

interface Passage {
  title: string;
  snippet: string;
}

function passagesOf(message: ChatMessage | undefined): Passage[] | null {
  if (!message || message.role !== "tool") return null;
  try {
    const parsed = JSON.parse(message.content) as { result_code?: string; result?: { passages?: Passage[] } };
    if (parsed.result_code !== "ok") return null;
    return parsed.result?.passages ?? [];
  } catch {
    return null;
  }
}

/**
 * The deterministic demo model, for development and tests only: it searches the knowledge base with the
 * user's question, then answers from the passages it got back, citing them by title.
 */
export function createScriptedProvider(): ModelProvider {
  return {
    name: "scripted",
    async complete(request: ModelRequest): Promise<ModelAnswer> {
      const messages = request.messages;
      // The run's input is the first user message after a thread's earlier turns; notes (language, step
      // ledger) follow it as user messages.
      const question = ownInputOf(messages);
      const inputTokens = approxTokens(messages.map((m) => ("content" in m && m.content) || "").join(" "));
      const last = messages[messages.length - 1];
      const searched = messages.some((m) => m.role === "tool");
      if (!searched && request.tools.some((t) => t.name === "knowledge_search")) {
        const args = JSON.stringify({ query: question.slice(0, 500) });
        const step = messages.filter((m) => m.role === "assistant").length + 1;
        return {
          text: "I will search the knowledge base for this.",
          toolCalls: [{ id: `call_${step}_1`, name: "knowledge_search", arguments: args }],
          finishReason: "tool_calls",
          usage: { input_tokens: inputTokens, output_tokens: approxTokens(args) + 8 },
          provider: "scripted",
        };
      }
      const passages = passagesOf(last);
      let text: string;
      if (passages === null) {
        text = `I could not consult the knowledge base, so I cannot answer "${question}" from it.`;
      } else if (passages.length === 0) {
        text = `The knowledge base has nothing about "${question}".`;
      } else {
        const lines = passages.slice(0, 3).map((p, i) => `[${i + 1}] ${p.title}: ${p.snippet}`);
        text = `From the knowledge base:\n${lines.join("\n")}`;
      }
      return {
        text,
        toolCalls: [],
        finishReason: "stop",
        usage: { input_tokens: inputTokens, output_tokens: approxTokens(text) },
        provider: "scripted",
      };
    },
  };
}
