import { metricCatalog, type Metrics } from "@steward/platform";
import type { Delivery, RunRequestedHandler } from "../../app/handle-run-requested";

/** Counts the run commands this runner receives again (from the delivery's own count: no server call). */
export function countRedeliveries(handle: RunRequestedHandler, metrics: Metrics): RunRequestedHandler {
  const redeliveries = metrics.counter(metricCatalog.redeliveries);
  return (delivery: Delivery) => {
    if (delivery.deliveryCount > 1) redeliveries.inc();
    return handle(delivery);
  };
}
