import { status } from "@grpc/grpc-js";
import CircuitBreaker from "opossum";
import type { InvokeRequest, InvokeResponse, ToolExecApi, CallOptions } from "@steward/proto";
import { reportBreakerStates, type BreakerStateName } from "../breaker-states";

/** Transport failures say tool-exec is unhealthy; an answer with a status about the request does not. */
function isTransportFailure(err: unknown): boolean {
  const code = (err as { code?: number }).code;
  return code === status.UNAVAILABLE || code === status.DEADLINE_EXCEEDED || code === status.UNKNOWN || code === status.INTERNAL;
}

/**
 * An opossum breaker around tool-exec, shared by every run of this runner: while tool-exec keeps failing,
 * calls fail fast (the run is retried on a later delivery) instead of each waiting for its own timeout.
 */
export function withToolExecBreaker(
  api: ToolExecApi,
  options: { resetTimeoutMs?: number; volumeThreshold?: number; onState?: (state: BreakerStateName) => void } = {},
): ToolExecApi {
  const breaker = new CircuitBreaker((req: InvokeRequest, opts: CallOptions) => api.invoke(req, opts), {
    timeout: false,
    errorThresholdPercentage: 50,
    volumeThreshold: options.volumeThreshold ?? 10,
    resetTimeout: options.resetTimeoutMs ?? 10_000,
    errorFilter: (err: unknown) => !isTransportFailure(err),
  });
  reportBreakerStates(breaker, options.onState);
  return {
    listTools: (opts) => api.listTools(opts),
    invoke: (req, opts = {}) => breaker.fire(req, opts) as Promise<InvokeResponse>,
    state: () => api.state(),
    close: () => api.close(),
  };
}
