import type { Pool } from "@steward/platform";
import type { BenchPlatform } from "../platform";
import type { GatewayClient } from "./client";
import type { RunWatcher } from "./watcher";
import { runInput } from "../fake-model";
import { wallMs } from "../stats";

/** What the Steward phases share. */
export interface StewardBench {
  readonly platform: BenchPlatform;
  readonly client: GatewayClient;
  readonly watcher: RunWatcher;
  /** A pool on the bench database for reading events (store type parsers: timestamps as ISO µs). */
  readonly pool: Pool;
  readonly token: string;
  /** The runner's RSS right after it started, MB. */
  readonly runnerStartRssMb: number;
}

/** The processes whose CPU time a measurement accounts for (PostgreSQL and nats-server are added by the meter). */
export function processIds(bench: StewardBench): Record<string, number> {
  const s = bench.platform.services;
  return {
    runner: s.runner.child.pid!,
    "tool-exec": s.toolExec.child.pid!,
    policy: s.policy.child.pid!,
    gateway: s.gateway.child.pid!,
    "bench (client, model)": process.pid,
  };
}

/** Creates a scripted run through the gateway; resolves with its id and when the POST was sent (wall ms). */
export async function createRun(
  bench: StewardBench,
  iterations: number,
  holdMs = 0,
  tool?: string,
): Promise<{ id: string; postedAt: number; answeredAt: number }> {
  const postedAt = wallMs();
  const res = await bench.client.post("/v1/agents/runs", { input: runInput(iterations, holdMs, tool) }, bench.token);
  const answeredAt = wallMs();
  if (res.status !== 201) throw new Error(`POST /v1/agents/runs answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return { id: res.body.id as string, postedAt, answeredAt };
}

/** Creates a run and waits until its terminal event is on the bus; throws unless it succeeded. */
export async function runToEnd(
  bench: StewardBench,
  iterations: number,
  holdMs = 0,
  timeoutMs = 120_000,
  tool?: string,
): Promise<{ id: string; postedAt: number; endedAt: number }> {
  const run = await createRun(bench, iterations, holdMs, tool);
  const end = await bench.watcher.ended(run.id, timeoutMs);
  if (end.type !== "run.succeeded") throw new Error(`run ${run.id} ended ${end.type}`);
  return { id: run.id, postedAt: run.postedAt, endedAt: end.at };
}
