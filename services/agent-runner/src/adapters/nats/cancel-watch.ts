import type { NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@steward/contract";

/**
 * Watches the bus copy of a run's `run.cancel_requested` event while the run is driven, so that a model
 * stream in flight can be aborted at once instead of at the next step.
 */
export function cancelWatcher(nc: NatsConnection, names: BusNames) {
  return (runId: string, onCancel: () => void): (() => void) => {
    const sub = nc.subscribe(names.runEvent(runId, "run.cancel_requested"), { max: 1, callback: () => onCancel() });
    return () => sub.unsubscribe();
  };
}
