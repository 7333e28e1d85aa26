import type CircuitBreaker from "opossum";
import type { BreakerState } from "@steward/platform";

/** A breaker's state as the metrics name it. */
export type BreakerStateName = BreakerState;

/** Reports `breaker`'s state now and at each change (opossum's open, halfOpen and close events). */
export function reportBreakerStates(breaker: CircuitBreaker, onState: ((state: BreakerStateName) => void) | undefined): void {
  if (!onState) return;
  onState(breaker.opened ? "open" : breaker.halfOpen ? "half_open" : "closed");
  breaker.on("open", () => onState("open"));
  breaker.on("halfOpen", () => onState("half_open"));
  breaker.on("close", () => onState("closed"));
}
