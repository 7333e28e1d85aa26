import { jetstream, type Consumer, type ConsumerInfo } from "@nats-io/jetstream";
import type { BusNames } from "@steward/contract";
import { metricCatalog, type Metrics, type NatsConnection } from "@steward/platform";
import { atMostEvery } from "./throttle";

/** The consumer's name as a label: the same in every namespace (the namespace is not the metric's business). */
const consumerLabel = "agent-runner";

/**
 * The runners' durable consumer as JetStream sees it (pending, ack pending, redelivered), asked at scrape time
 * and at most every `minIntervalMs` (default 5000). Every runner reports the same consumer: aggregate with
 * max, not sum. When JetStream does not answer, the series are absent rather than stale.
 */
export function watchRunnerConsumer(deps: { nc: NatsConnection; names: BusNames }, metrics: Metrics, options: { minIntervalMs?: number } = {}): void {
  const js = jetstream(deps.nc, { timeout: 2000 });
  let consumer: Consumer | null = null;
  const read = atMostEvery(options.minIntervalMs ?? 5000, async (): Promise<ConsumerInfo | null> => {
    try {
      consumer ??= await js.consumers.get(deps.names.commandStream, deps.names.runnerConsumer);
      return await consumer.info();
    } catch {
      consumer = null; // gone (re-provisioned) or the bus is away: found again next time
      return null;
    }
  });
  metrics.gauge(metricCatalog.consumerPending, async (gauge) => {
    const info = await read();
    gauge.reset();
    if (!info) return;
    gauge.set({ consumer: consumerLabel, kind: "pending" }, info.num_pending);
    gauge.set({ consumer: consumerLabel, kind: "ack_pending" }, info.num_ack_pending);
  });
  metrics.gauge(metricCatalog.consumerRedelivered, async (gauge) => {
    const info = await read();
    gauge.reset();
    if (info) gauge.set({ consumer: consumerLabel }, info.num_redelivered);
  });
}
