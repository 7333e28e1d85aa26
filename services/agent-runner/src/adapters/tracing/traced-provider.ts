import { inSpan, SpanKind, tracingOn } from "@steward/platform";
import type { ModelProvider } from "../../domain/model";

/** The model asked through each profile (its configured name), for the GenAI attributes. */
export type ProfileModels = Readonly<Record<string, string | undefined>>;

/**
 * One client span per model call, after the OpenTelemetry GenAI conventions: the operation, the provider, the
 * model asked and the one that answered, the finish reason and the token counts. Never a prompt, an answer,
 * a tool argument or a key: only names and numbers. A child of the active span (the run's delivery).
 */
export function tracedProvider(provider: ModelProvider, models: ProfileModels): ModelProvider {
  const first = provider.primary ?? provider.name;
  const requested = models[first] ?? first;
  // The scripted demo model is Steward's own; every configured profile speaks the OpenAI API.
  const system = (profile: string) => (profile === "scripted" ? "steward.scripted" : "openai");
  return {
    name: provider.name,
    primary: provider.primary,
    complete(request) {
      if (!tracingOn()) return provider.complete(request);
      return inSpan(
        `chat ${requested}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": system(first),
            "gen_ai.system": system(first),
            "gen_ai.request.model": requested,
            "gen_ai.request.max_tokens": request.maxOutputTokens,
          },
        },
        async (span) => {
          const answer = await provider.complete(request);
          span.setAttributes({
            "gen_ai.response.model": models[answer.provider] ?? answer.provider,
            "gen_ai.response.finish_reasons": [answer.finishReason],
            "gen_ai.usage.input_tokens": answer.usage.input_tokens,
            "gen_ai.usage.output_tokens": answer.usage.output_tokens,
            "steward.model.profile": answer.provider,
          });
          return answer;
        },
      );
    },
  };
}
