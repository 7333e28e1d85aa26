import { ModelCallAbortedError, ModelUnavailableError, type ModelAnswer, type ModelProvider, type ModelRequest } from "../../domain/model";
import { chatCompletions } from "./chat-completions";
import { assembleStream } from "./stream-assembly";
import { untilSilent } from "./until-silent";

export interface OpenAiProfile {
  /** A name for events and logs, e.g. "primary" or "fallback". */
  readonly name: string;
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly model: string;
  /** Per-request timeout in ms, and the longest silence allowed between two chunks of an answer. Default 60 000. */
  readonly timeoutMs?: number;
}

/**
 * An OpenAI-compatible chat-completions endpoint (OpenAI, LiteLLM, vLLM, Ollama), streamed over plain HTTP
 * (chat-completions.ts; docs/runtime.md says why not the SDK): text deltas go to `onDelta` as they come and
 * tool-call fragments are assembled by index. Every failure to get an answer becomes ModelUnavailableError;
 * the provider's own words stay in the cause, which is never shown to clients or logged at info level.
 */
export function createOpenAiProvider(profile: OpenAiProfile): ModelProvider {
  const timeoutMs = profile.timeoutMs ?? 60_000;
  // The timeout ends when the answer's headers arrive; untilSilent bounds the streamed body.
  const stream = chatCompletions({ baseUrl: profile.baseUrl, apiKey: profile.apiKey, timeoutMs });
  return {
    name: profile.name,
    async complete(request: ModelRequest): Promise<ModelAnswer> {
      // A controller of this call only, tied to the caller's signal by a listener removed when the call ends, so a
      // caller's long-lived signal does not collect one per call.
      const call = new AbortController();
      const abort = () => call.abort(request.signal.reason);
      request.signal.addEventListener("abort", abort, { once: true });
      if (request.signal.aborted) abort();
      try {
        const chunks = stream(
          {
            model: profile.model,
            messages: request.messages,
            tools:
              request.tools.length > 0
                ? request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }))
                : undefined,
            max_tokens: request.maxOutputTokens,
            stream_options: { include_usage: true },
          },
          call.signal,
        );
        const answer = await assembleStream(
          untilSilent(chunks, timeoutMs, () => call.abort()),
          request.onDelta,
        );
        // What arrived before an abort is a cut answer, never an answer, however the stream ended.
        if (call.signal.aborted) throw new Error("the answer's stream was aborted");
        return { ...answer, provider: profile.name };
      } catch (err) {
        if (request.signal.aborted) throw new ModelCallAbortedError({ cause: err });
        throw new ModelUnavailableError(profile.name, { cause: err });
      } finally {
        request.signal.removeEventListener("abort", abort);
      }
    },
  };
}
