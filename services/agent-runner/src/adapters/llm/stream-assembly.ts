import type { ModelAnswer } from "../../domain/model";

/** The parts of a streamed chat-completion chunk the assembly reads. */
export interface CompletionChunk {
  choices: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

function finishReasonOf(reason: string | null | undefined): ModelAnswer["finishReason"] {
  if (reason === "stop" || reason === "tool_calls" || reason === "length") return reason;
  return "other";
}

/**
 * Folds a stream of chunks into one answer: text deltas concatenated (and passed to `onDelta`), tool calls
 * assembled by their index — the id and name arrive once, the arguments in fragments.
 */
export async function assembleStream(chunks: AsyncIterable<CompletionChunk>, onDelta?: (text: string) => void): Promise<Omit<ModelAnswer, "provider">> {
  let text = "";
  let finish: string | null | undefined;
  let usage = { input_tokens: 0, output_tokens: 0 };
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for await (const chunk of chunks) {
    if (chunk.usage) usage = { input_tokens: chunk.usage.prompt_tokens ?? 0, output_tokens: chunk.usage.completion_tokens ?? 0 };
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      if (delta?.content) {
        text += delta.content;
        onDelta?.(delta.content);
      }
      for (const part of delta?.tool_calls ?? []) {
        const call = calls.get(part.index) ?? { id: "", name: "", arguments: "" };
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        calls.set(part.index, call);
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
  return { text, toolCalls, finishReason: finishReasonOf(finish), usage };
}
