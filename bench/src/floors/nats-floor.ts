import { randomUUID } from "node:crypto";
import { jetstream, jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connectNats } from "@steward/platform";
import { afterIdle, closedLoop, repeated, summarize, type IdlePause, type Repeated, type Summary } from "../stats";

export interface NatsFloor {
  readonly latency: Summary;
  /** The same publish, each after an idle pause (`options.idle`). */
  readonly afterIdle: Summary;
  /** Acked publishes/s with this many publishes in flight. */
  readonly rate: Record<number, Repeated>;
  readonly serverVersion: string;
}

export function floorStreamName(namespace: string): string {
  return `${namespace.toUpperCase()}_BENCH_FLOOR`;
}

/**
 * JetStream's floor: publish-with-ack to a file-backed stream (as Steward's streams are), with a
 * Nats-Msg-Id (as the relay sends), one at a time (back to back, and each after an idle pause); and the acked
 * rate with several in flight.
 */
export async function measureNatsFloor(
  natsUrl: string,
  namespace: string,
  options: { samples: number; windowMs: number; repeats: number; concurrencies: number[]; idle: IdlePause },
): Promise<NatsFloor> {
  const nc = await connectNats(natsUrl, "steward-bench-floor");
  const stream = floorStreamName(namespace);
  const subject = `${namespace}.bench.floor`;
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.File, duplicate_window: 120_000_000_000 });
    const js = jetstream(nc);
    const payload = new TextEncoder().encode(JSON.stringify({ type: "tool_call", data: { step_no: 3, note: "x".repeat(400) } }));
    const publish = () => js.publish(subject, payload, { msgID: randomUUID() });
    for (let i = 0; i < 200; i++) await publish(); // warm-up
    const samples: number[] = [];
    for (let i = 0; i < options.samples; i++) {
      const t0 = performance.now();
      await publish();
      samples.push(performance.now() - t0);
    }
    const idle = await afterIdle(options.idle, publish);
    const rate: Record<number, Repeated> = {};
    for (const c of options.concurrencies) {
      const values: number[] = [];
      for (let r = 0; r < options.repeats; r++) {
        let done = 0;
        const elapsed = await closedLoop(c, options.windowMs, async () => {
          await publish();
          done++;
        });
        values.push((done / elapsed) * 1000);
      }
      rate[c] = repeated(values);
    }
    await jsm.streams.delete(stream).catch(() => undefined);
    return { latency: summarize(samples), afterIdle: summarize(idle), rate, serverVersion: nc.info?.version ?? "unknown" };
  } finally {
    await nc.close();
  }
}
