import autocannon from "autocannon";
import type { Pool } from "pg";
import { cpuMeter, perUnit } from "../cpu";
import { pgActivityMeter, perUnitActivity, type PgActivity } from "../pg-activity";
import { repeated, type Repeated } from "../stats";

export interface CannonResult {
  readonly requestsPerSecond: Repeated;
  /** Latency in ms (autocannon's histogram has 1 ms resolution), median over the repeats. */
  readonly p50: Repeated;
  readonly p99: Repeated;
  readonly non2xx: number;
  readonly errors: number;
  readonly total2xx: number;
  /** Answers by HTTP status over the measured repeats. */
  readonly statusCodes: Record<string, number>;
  /** CPU ms per 2xx answer by process over the measured repeats (autocannon runs in the bench process). */
  readonly cpuPerRequest: Record<string, number>;
  /** PostgreSQL transactions and rows written per 2xx answer (the whole database). */
  readonly pgPerRequest: PgActivity;
}

async function once(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** autocannon against one route, `repeats` times after a short warm-up. */
export async function cannon(
  url: string,
  options: {
    method: "GET" | "POST";
    token: string;
    body?: unknown;
    connections: number;
    seconds: number;
    repeats: number;
    pids: Record<string, number>;
    pool: Pool;
  },
): Promise<CannonResult> {
  const request: autocannon.Options = {
    url,
    method: options.method,
    connections: options.connections,
    headers: {
      authorization: `Bearer ${options.token}`,
      ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    timeout: 20,
  };
  await once({ ...request, duration: Math.min(2, options.seconds) }); // warm-up
  const rps: number[] = [];
  const p50: number[] = [];
  const p99: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let total2xx = 0;
  const statusCodes: Record<string, number> = {};
  const meter = cpuMeter(options.pids);
  const pgMeter = await pgActivityMeter(options.pool);
  for (let r = 0; r < options.repeats; r++) {
    const result = await once({ ...request, duration: options.seconds });
    // Only 2xx answers count as served requests.
    rps.push(result["2xx"] / (result.duration || options.seconds));
    p50.push(result.latency.p50);
    p99.push(result.latency.p99);
    non2xx += result.non2xx;
    errors += result.errors + result.timeouts;
    total2xx += result["2xx"];
    const stats = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
    for (const [code, { count }] of Object.entries(stats)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  }
  const cpuPerRequest = perUnit(meter.stop(), total2xx);
  const pgPerRequest = perUnitActivity(await pgMeter.stop(), total2xx);
  return { requestsPerSecond: repeated(rps), p50: repeated(p50), p99: repeated(p99), non2xx, errors, total2xx, statusCodes, cpuPerRequest, pgPerRequest };
}
