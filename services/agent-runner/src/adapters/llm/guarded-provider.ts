import CircuitBreaker from "opossum";
import { reportBreakerStates, type BreakerStateName } from "../breaker-states";
import { ModelUnavailableError, type ModelAnswer, type ModelProvider, type ModelRequest } from "../../domain/model";

export interface BreakerOptions {
  /** Failure percentage over the rolling window that opens the breaker. Default 50. */
  errorThresholdPercentage?: number;
  /** Calls in the window before the breaker may open. Default 10. */
  volumeThreshold?: number;
  /** How long the breaker stays open before a trial call, in ms. Default 30 000. */
  resetTimeoutMs?: number;
  /** Told the breaker's state at once and at each change (for the metrics). */
  onState?: (state: BreakerStateName) => void;
}

/**
 * An opossum breaker around one provider profile, shared by every run of this runner: when a profile keeps
 * failing, calls fail fast (and the chain moves on to the next profile) until a trial call succeeds.
 */
export function withBreaker(provider: ModelProvider, options: BreakerOptions = {}): ModelProvider {
  const resetTimeoutMs = options.resetTimeoutMs ?? 30_000;
  const breaker = new CircuitBreaker((request: ModelRequest) => provider.complete(request), {
    timeout: false,
    errorThresholdPercentage: options.errorThresholdPercentage ?? 50,
    volumeThreshold: options.volumeThreshold ?? 10,
    resetTimeout: resetTimeoutMs,
    // Only the provider being unavailable counts against it; a bug of ours is not the provider's fault.
    errorFilter: (err: unknown) => !(err instanceof ModelUnavailableError),
  });
  reportBreakerStates(breaker, options.onState);
  return {
    name: provider.name,
    async complete(request): Promise<ModelAnswer> {
      try {
        return (await breaker.fire(request)) as ModelAnswer;
      } catch (err) {
        if (err instanceof ModelUnavailableError) throw err;
        if ((err as { code?: string }).code === "EOPENBREAKER") {
          throw new ModelUnavailableError(provider.name, { cause: err, retryAfterMs: resetTimeoutMs });
        }
        throw err;
      }
    },
  };
}
