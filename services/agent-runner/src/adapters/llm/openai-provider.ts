import OpenAI from "openai";
import { ModelCallAbortedError, ModelUnavailableError, type ModelAnswer, type ModelProvider, type ModelRequest } from "../../domain/model";

export interface OpenAiProfile {
  /** A name for events and logs, e.g. "primary" or "fallback". */
  readonly name: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly model: string;
  /** Per-request timeout in ms. Default 60 000. */
  readonly timeoutMs?: number;
}

function finishReasonOf(reason: string | null | undefined): ModelAnswer["finishReason"] {
  if (reason === "stop" || reason === "tool_calls" || reason === "length") return reason;
  return "other";
}

/**
 * An OpenAI-compatible chat-completions endpoint (OpenAI, LiteLLM, vLLM, Ollama) through the official SDK.
 * Every failure to get an answer becomes ModelUnavailableError; the provider's own words stay in the cause,
 * which is never shown to clients or logged at info level.
 */
export function createOpenAiProvider(profile: OpenAiProfile): ModelProvider {
  const client = new OpenAI({
    baseURL: profile.baseUrl,
    apiKey: profile.apiKey || "unset",
    timeout: profile.timeoutMs ?? 60_000,
    maxRetries: 0,
  });
  return {
    name: profile.name,
    async complete(request: ModelRequest): Promise<ModelAnswer> {
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      try {
        completion = await client.chat.completions.create(
          {
            model: profile.model,
            messages: request.messages as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
            tools:
              request.tools.length > 0
                ? request.tools.map((t) => ({
                    type: "function" as const,
                    function: { name: t.name, description: t.description, parameters: t.parameters },
                  }))
                : undefined,
            max_tokens: request.maxOutputTokens,
          },
          { signal: request.signal },
        );
      } catch (err) {
        if (request.signal.aborted) throw new ModelCallAbortedError({ cause: err });
        throw new ModelUnavailableError(profile.name, { cause: err });
      }
      const choice = completion.choices[0];
      if (!choice) throw new ModelUnavailableError(profile.name);
      const toolCalls = (choice.message.tool_calls ?? [])
        .filter((c): c is OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall => c.type === "function")
        .map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
      return {
        text: choice.message.content ?? "",
        toolCalls,
        finishReason: finishReasonOf(choice.finish_reason),
        usage: {
          input_tokens: completion.usage?.prompt_tokens ?? 0,
          output_tokens: completion.usage?.completion_tokens ?? 0,
        },
        provider: profile.name,
      };
    },
  };
}
