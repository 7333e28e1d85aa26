import { settle } from "../machine";
import { closedLoopUntil, isoToMs, repeated, summarize, type Repeated, type Summary } from "../stats";
import { addCpu, cpuMeter, perUnit } from "../cpu";
import { addActivity, noActivity, pgActivityMeter, perUnitActivity, type PgActivity } from "../pg-activity";
import { processIds, runToEnd, type StewardBench } from "./context";

export const ITERATIONS = 10;

/**
 * Time of each iteration of the given runs, from the event store: the interval between consecutive model
 * answers (thought k → thought k+1, the last thought → message). One interval holds everything one ReAct
 * iteration does: tool_call appended, tool-exec (PDP, idempotency record, the tool's own write),
 * tool_result appended, the model asked, its answer appended. A run of N iterations gives N intervals.
 */
export async function iterationIntervals(bench: StewardBench, runIds: string[]): Promise<number[]> {
  const { rows } = await bench.pool.query<{ stream_id: string; recorded_at: string }>(
    `SELECT stream_id, recorded_at FROM events
      WHERE stream_id = ANY($1::uuid[]) AND type IN ('thought', 'message') ORDER BY stream_id, version`,
    [runIds],
  );
  const out: number[] = [];
  for (let i = 1; i < rows.length; i++) {
    if (rows[i].stream_id === rows[i - 1].stream_id) out.push(isoToMs(rows[i].recorded_at) - isoToMs(rows[i - 1].recorded_at));
  }
  return out;
}

/** Where an iteration's time goes, from consecutive events of each iteration (medians over all iterations). */
export interface IterationBreakdown {
  /** thought → tool_call: the thought's transaction commits, the loop decides, tool_call is inserted. */
  readonly thoughtToToolCall: Summary;
  /** tool_call → tool_result: tool_call commits, ToolExec.Invoke (PDP, idempotency record, the tool), tool_result inserted. */
  readonly toolCallToResult: Summary;
  /** tool_result → next answer: tool_result commits, the model is asked over HTTP, the answer is inserted. */
  readonly resultToAnswer: Summary;
  /** Inside tool_call → tool_result, as tool-exec times it: waiting for the PDP's answer (gRPC, evaluation, record's commit). */
  readonly toolExecAwaitsPdp: Summary;
  /** Inside tool_call → tool_result, as tool-exec times it: the tool running (its own statements; not its record's commit). */
  readonly toolRuns: Summary;
  /** Inside the PDP's answer: the evaluation (membership read, Cedar) before the record is written (`latency_ms`). */
  readonly pdpEvaluates: Summary;
}

/** The parts of the tool step that tool-exec and the PDP time themselves (tool_result's timings, the decision log). */
async function toolStepParts(bench: StewardBench, runIds: string[]): Promise<Pick<IterationBreakdown, "toolExecAwaitsPdp" | "toolRuns" | "pdpEvaluates">> {
  const timings = await bench.pool.query<{ decision_ms: number; tool_ms: number }>(
    `SELECT (data->'timings'->>'decision_ms')::float8 AS decision_ms, (data->'timings'->>'tool_ms')::float8 AS tool_ms FROM events
      WHERE stream_id = ANY($1::uuid[]) AND type = 'tool_result' AND data ? 'timings'`,
    [runIds],
  );
  const decisions = await bench.pool.query<{ latency_ms: number }>("SELECT latency_ms FROM policy_decisions WHERE run_id = ANY($1::uuid[])", [runIds]);
  return {
    toolExecAwaitsPdp: summarize(timings.rows.map((r) => r.decision_ms)),
    toolRuns: summarize(timings.rows.map((r) => r.tool_ms)),
    pdpEvaluates: summarize(decisions.rows.map((r) => r.latency_ms)),
  };
}

export async function iterationBreakdown(bench: StewardBench, runIds: string[]): Promise<IterationBreakdown> {
  const { rows } = await bench.pool.query<{ stream_id: string; type: string; recorded_at: string }>(
    `SELECT stream_id, type, recorded_at FROM events
      WHERE stream_id = ANY($1::uuid[]) AND type IN ('thought', 'tool_call', 'tool_result', 'message') ORDER BY stream_id, version`,
    [runIds],
  );
  const a: number[] = [];
  const b: number[] = [];
  const c: number[] = [];
  // Other event types between these (a recorded decision, say) belong to the span they fall in.
  let stream = "";
  let answer = Number.NaN;
  let call = Number.NaN;
  let result = Number.NaN;
  for (const row of rows) {
    const t = isoToMs(row.recorded_at);
    if (row.stream_id !== stream) {
      stream = row.stream_id;
      answer = call = result = Number.NaN;
    }
    if (row.type === "tool_call") {
      if (Number.isFinite(answer)) a.push(t - answer);
      call = t;
    } else if (row.type === "tool_result") {
      if (Number.isFinite(call)) b.push(t - call);
      result = t;
    } else {
      if (Number.isFinite(result)) c.push(t - result);
      answer = t;
      call = result = Number.NaN;
    }
  }
  return { thoughtToToolCall: summarize(a), toolCallToResult: summarize(b), resultToAnswer: summarize(c), ...(await toolStepParts(bench, runIds)) };
}

/** run.succeeded recorded → its copy received from the bus (outbox relay: NOTIFY, claim, publish, ack). */
async function relayLag(bench: StewardBench, ended: Map<string, number>): Promise<Summary> {
  const { rows } = await bench.pool.query<{ stream_id: string; recorded_at: string }>(
    "SELECT stream_id, recorded_at FROM events WHERE stream_id = ANY($1::uuid[]) AND type = 'run.succeeded'",
    [[...ended.keys()]],
  );
  return summarize(rows.map((r) => ended.get(r.stream_id)! - isoToMs(r.recorded_at)));
}

export interface SerialResult {
  /** Per-iteration interval from the events. */
  readonly iteration: Summary;
  /** Whole run (POST sent → run.succeeded on the bus) divided by its iterations. */
  readonly wallPerIteration: Summary;
  readonly breakdown: IterationBreakdown;
  readonly relayLag: Summary;
  readonly runs: number;
}

/**
 * Checks that every iteration of the runs really ran the tool: each tool_result is `ok` and the tool's own
 * side-effect row exists exactly once per (run, key).
 */
export async function checkRealTools(bench: StewardBench, runIds: string[], iterations: number): Promise<void> {
  const { rows } = await bench.pool.query<{ result_code: string; n: number }>(
    `SELECT data->>'result_code' AS result_code, count(*)::int AS n FROM events
      WHERE stream_id = ANY($1::uuid[]) AND type = 'tool_result' GROUP BY 1`,
    [runIds],
  );
  const bad = rows.filter((r) => r.result_code !== "ok");
  if (bad.length) throw new Error(`tool results that are not ok: ${JSON.stringify(bad)}`);
  const effects = await bench.pool.query<{ n: number; once: number }>(
    "SELECT count(*)::int AS n, count(*) FILTER (WHERE count = 1)::int AS once FROM test_side_effects WHERE run_id = ANY($1::uuid[])",
    [runIds],
  );
  const want = runIds.length * iterations;
  if (effects.rows[0].n !== want || effects.rows[0].once !== want) {
    throw new Error(`expected ${want} tool side effects, each once; found ${effects.rows[0].n} (${effects.rows[0].once} once)`);
  }
}

/** Checks that every iteration of the runs really read: each tool_result is `ok`, and tool-exec kept each call's result. */
export async function checkReads(bench: StewardBench, runIds: string[], iterations: number): Promise<void> {
  const { rows } = await bench.pool.query<{ ok: number; kept: number }>(
    `SELECT (SELECT count(*) FROM events WHERE stream_id = ANY($1::uuid[]) AND type = 'tool_result' AND data->>'result_code' = 'ok')::int AS ok,
            (SELECT count(*) FROM tool_results WHERE run_id = ANY($1::uuid[]))::int AS kept`,
    [runIds],
  );
  const want = runIds.length * iterations;
  if (rows[0].ok !== want || rows[0].kept !== want) throw new Error(`expected ${want} reads, each ok and kept; found ${JSON.stringify(rows[0])}`);
}

/** The tool the runs call: `test_counter` (a write, the default) or `test_lookup` (a read that keeps its result). */
export type BenchTool = "test_counter" | "test_lookup";

/** What proves, per tool, that each iteration of the runs really called it. */
const checkRuns: Record<BenchTool, (bench: StewardBench, runIds: string[], iterations: number) => Promise<void>> = {
  test_counter: checkRealTools,
  test_lookup: checkReads,
};

/** Runs of 10 iterations one at a time (after `warmup` unmeasured ones). */
export async function measureSerial(bench: StewardBench, runs: number, warmup: number, tool: BenchTool = "test_counter"): Promise<SerialResult> {
  for (let i = 0; i < warmup; i++) await runToEnd(bench, ITERATIONS, 0, undefined, tool);
  const ids: string[] = [];
  const wall: number[] = [];
  const ended = new Map<string, number>();
  for (let i = 0; i < runs; i++) {
    const r = await runToEnd(bench, ITERATIONS, 0, undefined, tool);
    ids.push(r.id);
    ended.set(r.id, r.endedAt);
    wall.push((r.endedAt - r.postedAt) / ITERATIONS);
  }
  await checkRuns[tool](bench, ids, ITERATIONS);
  return {
    iteration: summarize(await iterationIntervals(bench, ids)),
    wallPerIteration: summarize(wall),
    breakdown: await iterationBreakdown(bench, ids),
    relayLag: await relayLag(bench, ended),
    runs,
  };
}

export interface ThroughputResult {
  /** Iterations/s (10 per run that succeeded; a run counts once its run.succeeded is on the bus). */
  readonly iterationsPerSecond: Repeated;
  /** Per-iteration interval under this load, all repeats. */
  readonly iteration: Summary;
  readonly runs: number;
  readonly failed: number;
  /** Runs that did not end within the run timeout; the measurement stopped at the first. */
  readonly stalled: number;
  /** When it stalled: the database sessions by service and state at that moment. */
  readonly stallEvidence?: Array<{ application_name: string; state: string; n: number }>;
  /** CPU ms per iteration by process over the measured repeats (PostgreSQL and nats-server: all of theirs). */
  readonly cpuPerIteration: Record<string, number>;
  /** PostgreSQL transactions and rows written per iteration (whole database: runner, tool-exec, policy, gateway). */
  readonly pgPerIteration: PgActivity;
  /** Each window was measured next to one of another platform's (`alternate`), in this order: ours, theirs, theirs, ours, … */
  readonly alternated?: boolean;
}

/**
 * Closed loop: `concurrency` clients each create a 10-iteration run, wait for it to end, and create the next,
 * for `windowMs`; runs started in the window are waited for and counted over the whole elapsed time. A run
 * that does not end within `runTimeoutMs` stops the measurement (the platform is stuck, not slow).
 */
export async function measureThroughput(
  bench: StewardBench,
  concurrency: number,
  options: {
    windowMs: number;
    repeats: number;
    runTimeoutMs: number;
    tool?: BenchTool;
    /**
     * Another platform's window, measured while this one is idle: after this one's first window, before its
     * second, after its third, … (A B B A A B), so that a host that drifts over the minutes weighs on both alike.
     * Each of this one's windows then starts as the other's should: once the machine has settled, after an
     * unmeasured round at this concurrency.
     */
    alternate?: () => Promise<void>;
  },
): Promise<ThroughputResult> {
  const tool = options.tool ?? "test_counter";
  let stalled = 0;
  let stallEvidence: ThroughputResult["stallEvidence"];
  const rates: number[] = [];
  const ids: string[] = [];
  let failed = 0;
  const one = async (counted: boolean) => {
    if (stalled) return;
    try {
      const run = await runToEnd(bench, ITERATIONS, 0, options.runTimeoutMs, tool);
      if (counted) ids.push(run.id);
      return true;
    } catch (err) {
      if (/did not end within/.test(String(err))) {
        stalled++;
        stallEvidence ??= (
          await bench.pool.query<{ application_name: string; state: string; n: number }>(
            `SELECT application_name, coalesce(state, '') AS state, count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() GROUP BY 1, 2 ORDER BY 1, 2`,
          )
        ).rows;
      } else if (counted) {
        failed++;
      }
      return false;
    }
  };
  // Warm-up: one round of runs at this concurrency. Against another platform, a whole window unmeasured: with one
  // round only, the first window of each side was its slowest, and LangGraph.js's more so.
  const warmUp = () => Promise.all(Array.from({ length: concurrency }, () => one(false)));
  if (!options.alternate) await warmUp();
  else {
    await closedLoopUntil(concurrency, options.windowMs, async () => {
      await one(false);
      return !stalled;
    });
  }
  // Each window is metered on its own: the CPU and PostgreSQL work of another platform's windows between them
  // is not ours.
  const cpu: Record<string, number> = {};
  let pg = noActivity;
  for (let r = 0; r < options.repeats && !stalled; r++) {
    if (options.alternate) {
      if (r % 2 === 1) await options.alternate();
      await settle();
      await warmUp();
    }
    const meter = cpuMeter(processIds(bench));
    const pgMeter = await pgActivityMeter(bench.pool);
    let succeeded = 0;
    const elapsed = await closedLoopUntil(concurrency, options.windowMs, async () => {
      if (stalled) return false;
      if (await one(true)) succeeded++;
      return !stalled;
    });
    addCpu(cpu, meter.stop());
    pg = addActivity(pg, await pgMeter.stop());
    if (!stalled) rates.push((succeeded * ITERATIONS * 1000) / elapsed);
    if (options.alternate && r % 2 === 0 && !stalled) await options.alternate();
  }
  if (ids.length) await checkRuns[tool](bench, ids, ITERATIONS);
  return {
    alternated: options.alternate ? true : undefined,
    cpuPerIteration: perUnit(cpu, ids.length * ITERATIONS),
    pgPerIteration: perUnitActivity(pg, ids.length * ITERATIONS),
    iterationsPerSecond: rates.length ? repeated(rates) : { median: Number.NaN, min: Number.NaN, max: Number.NaN, values: [] },
    iteration: summarize(ids.length ? await iterationIntervals(bench, ids) : []),
    runs: ids.length,
    failed,
    stalled,
    stallEvidence,
  };
}
