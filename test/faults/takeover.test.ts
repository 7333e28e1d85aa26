import { useFaultCluster } from "../support/faults/fault-cluster";
import { startFaultPlatform, type FaultPlatform, type ServiceProcess } from "../support/faults/fault-platform";
import { checkRunInvariants } from "../support/faults/invariants";
import { enoughInFlight } from "../support/faults/in-flight";
import { diagnose, record } from "../support/faults/scenario";
import { waitFor } from "../support/wait-for";

jest.setTimeout(240_000);

const RUNS = 30;
const TOOL_STEPS = 5;
/** Long enough that every run is still in flight after the second runner has started. */
const DELAY_MS = 1000;
/**
 * SPEC §10 wants a run held by a dead runner taken over within 5 s. That is a timing target, so the benchmark
 * measures it (bench `--only=takeover`); here every run must be taken over and end right, and the times are
 * reported with the fault.
 */

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * kill -9 of the runner that holds 30 runs in flight while a second runner is alive: per run, the time from
 * the kill to the run's next event (which only the surviving runner can append).
 */
describe("faults: takeover after a runner is killed", () => {
  let platform: FaultPlatform | undefined;
  // Declared before the cluster's hooks: jest runs afterAll hooks in order, and the platform must go first.
  afterAll(async () => {
    await platform?.teardown();
  });
  const cluster = useFaultCluster();

  it("a second runner takes over every run the killed one had in flight, and each ends right", async () => {
    platform = await startFaultPlatform(cluster(), { toolSteps: TOOL_STEPS });
    const p = platform;
    const runnerA = p.current["agent-runner"];
    const runnerAId = String(runnerA.ready.runner_id);
    const ids = await p.submitRuns("takeover", RUNS, DELAY_MS);

    // Runner A (32 workers) holds every run before runner B exists; B starts while they are in flight.
    await waitFor(
      async () => {
        const { rows } = await p.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND lease_owner = $2", [
          ids,
          runnerAId,
        ]);
        return rows[0].n === RUNS ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: `runner A to hold all ${RUNS} runs` },
    );
    const runnerB: ServiceProcess = await p.startSecondRunner();
    const atKill = await waitFor(
      async () => {
        const { rows } = await p.pool.query<{ effects: number; terminal: number }>(
          `SELECT (SELECT coalesce(sum(count), 0) FROM test_side_effects WHERE run_id = ANY($1::uuid[]))::int AS effects,
                  (SELECT count(*) FROM runs WHERE id = ANY($1::uuid[]) AND state IN ('succeeded', 'failed', 'cancelled'))::int AS terminal`,
          [ids],
        );
        return rows[0].effects >= RUNS / 2 ? rows[0] : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50, what: "half of the first tool steps done" },
    );
    // On a loaded machine a few runs may have ended before the kill: the fault is about the ones in flight.
    enoughInFlight(RUNS, atKill.terminal);

    await p.kill9("agent-runner");
    const killedAt = (await p.pool.query<{ t: string }>("SELECT clock_timestamp()::text AS t")).rows[0].t;
    const killedAtMs = Date.now();
    // The runs in flight at the kill (none can move until the survivor claims them), with their last version.
    const versions = (
      await p.pool.query<{ stream_id: string; v: number }>(
        `SELECT e.stream_id::text, max(e.version)::int AS v FROM events e JOIN runs r ON r.id = e.stream_id
          WHERE e.stream_id = ANY($1::uuid[]) AND r.state NOT IN ('succeeded', 'failed', 'cancelled') GROUP BY e.stream_id`,
        [ids],
      )
    ).rows;

    const outcome = await waitFor(
      async () => {
        if (p.unexpectedExits().length > 0) return "a service exited" as const;
        const { rows } = await p.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND state IN ('succeeded', 'failed', 'cancelled')",
          [ids],
        );
        return rows[0].n === RUNS ? ("done" as const) : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, what: "every run to end" },
    ).catch(() => "timed out" as const);
    const allDoneMs = Date.now() - killedAtMs;

    // Per run: the first event after the kill (a version above the one it had), by the server's clock.
    const { rows: taken } = await p.pool.query<{ stream_id: string; ms: number | null }>(
      `SELECT k.stream_id, (extract(epoch FROM min(e.recorded_at) - $2::timestamptz) * 1000)::float8 AS ms
         FROM unnest($1::uuid[], $3::int[]) AS k(stream_id, v)
         LEFT JOIN events e ON e.stream_id = k.stream_id AND e.version > k.v
        GROUP BY k.stream_id`,
      [versions.map((v) => v.stream_id), killedAt, versions.map((v) => v.v)],
    );
    const times = taken
      .map((t) => t.ms)
      .filter((ms): ms is number => ms !== null)
      .sort((a, b) => a - b);
    const notTaken = taken.filter((t) => t.ms === null).length;

    const violations: string[] = [];
    if (outcome !== "done") violations.push(`not every run ended (${outcome})`, ...(await diagnose(p, ids)));
    const nc = await cluster().connectNats();
    const checked = await checkRunInvariants({
      pool: p.pool,
      nc,
      namespace: p.namespace,
      runIds: ids,
      toolSteps: TOOL_STEPS,
      delayMs: DELAY_MS,
      busTimeoutMs: outcome === "done" ? 30_000 : 2_000,
    }).finally(() => nc.close().catch(() => undefined));
    violations.push(...checked.violations);
    for (const proc of [p.current.policy, p.current["tool-exec"], p.current.gateway, runnerB]) {
      if (proc.exit)
        violations.push(`${proc.service} pid ${proc.pid} is gone (code ${proc.exit.code}, signal ${proc.exit.signal}) though the fault did not touch it`);
    }
    const takeover = {
      runs: taken.length,
      notTakenOver: notTaken,
      p50Ms: times.length ? Math.round(percentile(times, 50)) : null,
      p99Ms: times.length ? Math.round(percentile(times, 99)) : null,
      maxMs: times.length ? Math.round(times[times.length - 1]) : null,
      minMs: times.length ? Math.round(times[0]) : null,
    };
    if (violations.length > 0) p.keepLogs();
    record({
      fault: "kill -9 runner, second runner takes over",
      runs: RUNS,
      toolSteps: TOOL_STEPS,
      delayMs: DELAY_MS,
      inFlightAtFault: versions.length,
      sideEffectsAtFault: atKill.effects,
      takeover,
      faultToAllDoneMs: outcome === "done" ? allDoneMs : null,
      busCatchUpMs: checked.busCatchUpMs,
      states: checked.states,
      violations,
      ...(violations.length > 0 ? { logDir: p.logDir } : {}),
    });

    expect(violations).toEqual([]);
    expect(takeover.runs).toBeGreaterThanOrEqual(RUNS / 2);
    expect(takeover.notTakenOver).toBe(0);
  });
});
