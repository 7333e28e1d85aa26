import { ModelUnavailableError, type ModelProvider } from "../../domain/model";

/**
 * Tries each profile in order; the first answer wins. Only when every profile is unavailable does the
 * chain report the model unavailable.
 */
export function createProviderChain(providers: readonly ModelProvider[]): ModelProvider {
  if (providers.length === 0) throw new RangeError("a provider chain needs at least one provider");
  if (providers.length === 1) return providers[0];
  return {
    name: providers.map((p) => p.name).join(">"),
    primary: providers[0].name,
    async complete(request) {
      let last: ModelUnavailableError | undefined;
      for (const provider of providers) {
        try {
          return await provider.complete(request);
        } catch (err) {
          if (!(err instanceof ModelUnavailableError)) throw err;
          last = err;
        }
      }
      throw new ModelUnavailableError("chain", { cause: last, retryAfterMs: last?.retryAfterMs });
    },
  };
}
