import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { busNames } from "@steward/contract";
import { connectNats } from "@steward/platform";
import { wallMs } from "../stats";

/**
 * Watches the bus copies of run events (core NATS subscription on the event subjects) and resolves the
 * waiters of runs that reached a type. A run counts as ended only once its terminal event is on JetStream,
 * i.e. persisted and published.
 */
export interface RunWatcher {
  /** Resolves with the terminal type and the wall time (ms) it arrived. */
  ended(runId: string, timeoutMs?: number): Promise<{ type: string; at: number }>;
  close(): Promise<void>;
}

export async function watchRuns(natsUrl: string, namespace: string): Promise<RunWatcher> {
  const nc: NatsConnection = await connectNats(natsUrl, "steward-bench-watcher");
  const names = busNames(namespace);
  const prefix = namespace ? `${namespace}.` : "";
  const arrived = new Map<string, { type: string; at: number }>();
  const waiting = new Map<string, (v: { type: string; at: number }) => void>();
  const subs: Subscription[] = [];
  for (const type of ["run.succeeded", "run.failed", "run.cancelled"]) {
    // agent.events.<run_id>.<type>: the type itself holds a dot, so match it literally.
    const sub = nc.subscribe(`${prefix}agent.events.*.${type}`, {
      callback: (err, msg) => {
        if (err) return;
        const runId = msg.subject.slice(`${prefix}agent.events.`.length).split(".")[0];
        const value = { type, at: wallMs() };
        const waiter = waiting.get(runId);
        if (waiter) {
          waiting.delete(runId);
          waiter(value);
        } else {
          arrived.set(runId, value);
        }
      },
    });
    subs.push(sub);
  }
  void names;
  await nc.flush();
  return {
    ended(runId, timeoutMs = 120_000) {
      const seen = arrived.get(runId);
      if (seen) {
        arrived.delete(runId);
        return Promise.resolve(seen);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(runId);
          reject(new Error(`run ${runId} did not end within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(runId, (v) => {
          clearTimeout(timer);
          resolve(v);
        });
      });
    },
    async close() {
      for (const s of subs) s.unsubscribe();
      await nc.close();
    },
  };
}
