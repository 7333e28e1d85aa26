import { cpus } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { Limits } from "@steward/contract";
import type { Pool } from "@steward/platform";
import { createRun, type StewardBench } from "../steward/context";
import { repoRoot } from "../paths";
import { summarize, type Summary } from "../stats";
import { othersBusy } from "../cpu";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const launcher = require(join(repoRoot, "infra", "local", "launcher.cjs")) as {
  startService(
    service: string,
    env: Record<string, string>,
    options?: { timeoutMs?: number; logFile?: string },
  ): Promise<{ child: ChildProcess; ready: Record<string, unknown>; whenReady(o: { timeoutMs: number }): Promise<void>; stop(): Promise<void> }>;
  serviceEnv(service: string, env: Record<string, string>, known: object): Record<string, string>;
};

/** Runs kept in flight per round (all held by runner A when it is killed). */
export const TAKEOVER_RUNS = 30;
/**
 * Every model answer of those runs is held this long, so that they stay in flight while runner B starts: a run
 * has at most Limits.stepBudget (25) model answers, ≥ 12.5 s. 30 of them ask ~60 answers/s, about half what
 * the platform drives on 2 cores, so the survivor is not measured on a saturated machine. The model call in
 * hand at the kill is asked again by the survivor, so the kill → next event time includes up to one hold.
 */
export const TAKEOVER_HOLD_MS = 500;
/** Tool calls per run: the step budget's worth (the last model answer is the final text), so none fails on it. */
const ITERATIONS = Limits.stepBudget - 1;
/** SPEC §10: a run held by a dead runner is taken over within 5 s. */
export const TAKEOVER_TARGET_MS = 5000;
/** After the kill, how long a run may take to move before it counts as not taken over. */
const TAKEOVER_BOUND_MS = 60_000;
const POLL_MS = 50;

export interface TakeoverRound {
  /** Runs that were in flight and held by runner A at the kill. */
  readonly inFlight: number;
  /** Runs that had ended before the kill (a loaded machine): not part of the measurement. */
  readonly endedBeforeKill: number;
  /** Of those in flight, runs with an event after the kill within the bound. */
  readonly takenOver: number;
  /** Per run: kill → first event with a higher version than at the kill (PostgreSQL's clock), ms. */
  readonly nextEventMs: number[];
  /** Per run: kill → first poll (every 50 ms) that saw runner B hold the lease, ms. */
  readonly leaseSeenMs: number[];
  /** Runner B: spawn → /readyz 200, ms. */
  readonly survivorReadyMs: number;
  /** CPU share (% of all cores) used by processes other than the bench's, PostgreSQL and NATS in the 4 s after the kill. */
  readonly othersBusyPct: number;
  /** How the round's runs ended (they are cancelled once measured). */
  readonly endStates: Record<string, number>;
}

export interface TakeoverResult {
  readonly runsPerRound: number;
  readonly holdMs: number;
  readonly rounds: TakeoverRound[];
  /** All rounds' kill → next event times. */
  readonly nextEvent: Summary;
  readonly leaseSeen: Summary;
  readonly inFlight: number;
  readonly takenOver: number;
  /** Runs that ended before the kill (B was slow to start on a loaded machine): not measured. */
  readonly endedBeforeKill: number;
  readonly targetMs: number;
}

interface Runner {
  readonly id: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Polls `probe` until it gives a value (not undefined); throws after `timeoutMs`. */
async function waitUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`takeover: timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

const exited = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;

/**
 * `kill -9` of a runner that holds runs in flight, with a second runner alive on the same database and bus:
 * per run, the time from the kill to its next event (which only the survivor can append), as
 * test/faults/takeover.test.ts measures it. Each round starts a fresh runner A, creates the runs, waits until
 * A holds all of them, starts runner B, kills A, waits (bounded) until every run has moved, then cancels the
 * runs and stops B. The platform's own runner is stopped first; the caller replaces the platform afterwards.
 */
export async function measureTakeover(
  bench: StewardBench,
  options: {
    rounds: number;
    runs?: number;
    logDir?: string;
    say: (text: string) => void;
    /** Filled with the runners' pids (bench processes, not "other work on the machine"). */
    ourPids: Set<number>;
    /** Registers a clean-up (the bench's cleanups: run at the end and on Ctrl-C). */
    cleanup: (fn: () => Promise<unknown>) => void;
  },
): Promise<TakeoverResult> {
  const runs = options.runs ?? TAKEOVER_RUNS;
  const { pool } = bench;
  await bench.platform.stopRunner();
  const env = launcher.serviceEnv("agent-runner", { ...bench.platform.env }, { toolExecAddr: bench.platform.services.toolExec.ready.addr, healthPort: 0 });
  let started = 0;
  const startRunner = async (label: string): Promise<Runner & { readyMs: number }> => {
    started++;
    const t0 = performance.now();
    const s = await launcher.startService("agent-runner", env, {
      logFile: options.logDir ? join(options.logDir, `takeover-${String(started).padStart(2, "0")}-${label}.log`) : undefined,
    });
    if (s.child.pid) options.ourPids.add(s.child.pid);
    options.cleanup(() => s.stop());
    await s.whenReady({ timeoutMs: 60_000 });
    const id = s.ready.runner_id;
    if (typeof id !== "string" || !id) throw new Error(`takeover: the runner's "listening" line has no runner_id: ${JSON.stringify(s.ready)}`);
    return { id, child: s.child, stop: () => s.stop(), readyMs: performance.now() - t0 };
  };

  const rounds: TakeoverRound[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    const a = await startRunner(`r${round}-a`);
    const ids: string[] = [];
    for (let i = 0; i < runs; i++) ids.push((await createRun(bench, ITERATIONS, TAKEOVER_HOLD_MS)).id);
    await waitUntil(`runner A to hold all ${runs} runs`, 30_000, async () => ((await heldBy(pool, ids, a.id)) === runs ? true : undefined));
    const b = await startRunner(`r${round}-b`);
    if (exited(a.child)) throw new Error(`takeover: runner A exited before the kill (code ${a.child.exitCode}, signal ${a.child.signalCode})`);

    // The server's clock just before the signal: the kill is no earlier, so the times are not understated.
    const killedAt = (await pool.query<{ t: string }>("SELECT clock_timestamp()::text AS t")).rows[0].t;
    const gone = new Promise<void>((resolve) => (exited(a.child) ? resolve() : a.child.once("exit", () => resolve())));
    a.child.kill("SIGKILL");
    // Other work on the machine while the survivor takes over (a shared machine moves these numbers).
    const others = othersBusy(4000, new Set([process.pid, ...options.ourPids]), cpus().length);
    await gone;
    // The runs in flight at the kill and held by A, with their last version (nothing can move them until B claims).
    const { rows: versions } = await pool.query<{ id: string; v: number }>(
      `SELECT r.id::text, (SELECT max(e.version) FROM events e WHERE e.stream_id = r.id)::int AS v
         FROM runs r WHERE r.id = ANY($1::uuid[]) AND r.state NOT IN ('succeeded', 'failed', 'cancelled') AND r.lease_owner = $2`,
      [ids, a.id],
    );
    const flightIds = versions.map((r) => r.id);
    const flightVersions = versions.map((r) => r.v);

    // Until every run has moved (bounded): per run, the first poll that saw B hold its lease.
    const leaseSeen = new Map<string, number>();
    let moved = 0;
    const deadline = Date.now() + TAKEOVER_BOUND_MS;
    while (Date.now() < deadline) {
      const { rows } = await pool.query<{ id: string; owner: string | null; moved: boolean; ms: number }>(
        `SELECT k.id::text, r.lease_owner AS owner,
                EXISTS (SELECT 1 FROM events e WHERE e.stream_id = k.id AND e.version > k.v) AS moved,
                (extract(epoch FROM clock_timestamp() - $3::timestamptz) * 1000)::float8 AS ms
           FROM unnest($1::uuid[], $2::int[]) AS k(id, v) JOIN runs r ON r.id = k.id`,
        [flightIds, flightVersions, killedAt],
      );
      for (const r of rows) if (r.owner === b.id && !leaseSeen.has(r.id)) leaseSeen.set(r.id, r.ms);
      moved = rows.filter((r) => r.moved).length;
      if (moved === flightIds.length) break;
      if (exited(b.child)) throw new Error(`takeover: runner B exited during the takeover (code ${b.child.exitCode}, signal ${b.child.signalCode})`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    // Per run: the first event after the kill (a version above the one it had), by the server's clock.
    const { rows: taken } = await pool.query<{ id: string; ms: number | null }>(
      `SELECT k.id::text, (extract(epoch FROM min(e.recorded_at) - $3::timestamptz) * 1000)::float8 AS ms
         FROM unnest($1::uuid[], $2::int[]) AS k(id, v)
         LEFT JOIN events e ON e.stream_id = k.id AND e.version > k.v
        GROUP BY k.id`,
      [flightIds, flightVersions, killedAt],
    );
    const nextEventMs = taken.map((t) => t.ms).filter((x): x is number => x !== null);
    const othersBusyPct = Math.round((await others) * 100);

    // The runs would go on for half a minute: cancel them, wait (bounded) until all have ended, stop B.
    for (const id of ids) await bench.client.post(`/v1/agents/runs/${id}/cancel`, {}, bench.token).catch(() => undefined);
    const endStates = await waitUntil("the round's runs to end after their cancel", 60_000, async () => {
      const { rows } = await pool.query<{ state: string; n: number }>("SELECT state, count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) GROUP BY state", [
        ids,
      ]);
      const states = Object.fromEntries(rows.map((r) => [r.state, r.n]));
      return rows.every((r) => ["succeeded", "failed", "cancelled"].includes(r.state)) ? states : undefined;
    });
    await b.stop();

    const r: TakeoverRound = {
      inFlight: flightIds.length,
      endedBeforeKill: runs - flightIds.length,
      takenOver: nextEventMs.length,
      nextEventMs,
      leaseSeenMs: [...leaseSeen.values()],
      survivorReadyMs: b.readyMs,
      othersBusyPct,
      endStates,
    };
    rounds.push(r);
    const s = summarize(nextEventMs);
    options.say(
      `  round ${round}: ${r.takenOver}/${r.inFlight} taken over; kill → next event p50 ${s.p50.toFixed(0)} ms, max ${s.max.toFixed(0)} ms (B ready in ${b.readyMs.toFixed(0)} ms; others ${othersBusyPct} % CPU after the kill)`,
    );
  }
  const all = rounds.flatMap((r) => r.nextEventMs);
  return {
    runsPerRound: runs,
    holdMs: TAKEOVER_HOLD_MS,
    rounds,
    nextEvent: summarize(all),
    leaseSeen: summarize(rounds.flatMap((r) => r.leaseSeenMs)),
    inFlight: rounds.reduce((n, r) => n + r.inFlight, 0),
    takenOver: rounds.reduce((n, r) => n + r.takenOver, 0),
    endedBeforeKill: rounds.reduce((n, r) => n + r.endedBeforeKill, 0),
    targetMs: TAKEOVER_TARGET_MS,
  };
}

async function heldBy(pool: Pool, ids: string[], owner: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM runs WHERE id = ANY($1::uuid[]) AND lease_owner = $2 AND state NOT IN ('succeeded', 'failed', 'cancelled')",
    [ids, owner],
  );
  return rows[0].n;
}
