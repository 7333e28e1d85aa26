import type { FaultCluster } from "./fault-cluster";
import { dependencyOrder, startFaultPlatform, type FaultPlatform, type ServiceName, type ServiceProcess } from "./fault-platform";
import { checkRunInvariants } from "./invariants";
import { enoughInFlight } from "./in-flight";
import { waitFor } from "../wait-for";
import { record, runProgress } from "./report";

export { outage, record, resultsFile } from "./report";

export interface FaultContext {
  readonly cluster: FaultCluster;
  readonly platform: FaultPlatform;
}

export interface Fault {
  readonly name: string;
  /** The services this fault kills or stops itself: they are not expected to keep their process. */
  readonly kills?: readonly ServiceName[];
  /** Injects the fault; resolves when the fault is over (servers back, killed services started again). */
  inject(ctx: FaultContext): Promise<void>;
}

export interface ScenarioOptions {
  /** Runs in flight when the fault hits. Default 30. */
  runs?: number;
  /** test_counter calls per run. Default 3. */
  toolSteps?: number;
  /** How long each test_counter call takes, in ms. Default 700. */
  delayMs?: number;
  /** Environment for every service. */
  env?: Record<string, string>;
  /** How long the runs may take to end after the fault is over, in ms. Default 90 000. */
  allDoneTimeoutMs?: number;
}

export interface FaultReport {
  fault: string;
  runs: number;
  toolSteps: number;
  delayMs: number;
  /** Runs not yet terminal when the fault hit. */
  inFlightAtFault: number;
  /** Side effects counted when the fault hit (of runs × toolSteps). */
  sideEffectsAtFault: number;
  /** How long the injection took (the outage itself, restarts included), in ms. */
  faultMs: number;
  /** From the start of the fault until every run was terminal, in ms (null: not all ended). */
  faultToAllDoneMs: number | null;
  /** From the end of the fault until every run was terminal, in ms. */
  recoveredToAllDoneMs: number | null;
  /** From all-done until the bus carried every stored event, in ms. */
  busCatchUpMs: number | null;
  states: Record<string, number>;
  violations: string[];
  /** Kept only when something broke. */
  logDir?: string;
}

const progress = (platform: FaultPlatform, ids: string[]) => runProgress(platform.pool, ids);

/** Warnings, errors and non-JSON output (stderr, stack traces) of one process: the last few. */
function trouble(platform: FaultPlatform, p: ServiceProcess, max = 6): string[] {
  const lines = platform.logTail(p, 400).split("\n");
  const bad = lines.filter((l) => {
    try {
      return (JSON.parse(l) as { level?: number }).level! >= 40;
    } catch {
      return l.trim() !== "";
    }
  });
  return bad.slice(-max).map((l) => `    ${l.slice(0, 400)}`);
}

/** Why a process died: its last error lines, and of a crash report the error and where it was emitted. */
function causeOfExit(platform: FaultPlatform, p: ServiceProcess): string[] {
  const lines = platform.logTail(p, 400).split("\n");
  const crash: string[] = [];
  lines.forEach((l, i) => {
    if (/^(\w*Error\b|Emitted |.*failed to start)/.test(l)) crash.push(l, ...(lines[i + 1]?.startsWith("    at ") ? [lines[i + 1]] : []));
  });
  const found = crash.length > 0 ? crash.slice(-8) : lines.slice(-8);
  return [...trouble(platform, p, 3).filter((l) => l.includes('"level"')), ...found.map((l) => `    ${l.slice(0, 300)}`)];
}

/** What stuck runs and dead processes look like: for the failure message. */
export async function diagnose(platform: FaultPlatform, ids: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of platform.processes) {
    if (p.exit && !p.exit.expected) {
      out.push(`${p.service} pid ${p.pid} exited by itself (code ${p.exit.code}, signal ${p.exit.signal}); cause:`, ...causeOfExit(platform, p));
    }
  }
  const open = await platform.pool
    .query<{ id: string; state: string; version: number; lease_owner: string | null }>(
      "SELECT id, state, version, lease_owner FROM runs WHERE id = ANY($1::uuid[]) AND state NOT IN ('succeeded', 'failed', 'cancelled')",
      [ids],
    )
    .catch(() => ({ rows: [] }));
  if (open.rows.length > 0) {
    const byState = new Map<string, number>();
    for (const r of open.rows) byState.set(`${r.state}/${r.lease_owner ?? "no lease"}`, (byState.get(`${r.state}/${r.lease_owner ?? "no lease"}`) ?? 0) + 1);
    out.push(`${open.rows.length} runs not terminal: ${[...byState].map(([k, n]) => `${n} ${k}`).join(", ")}`);
    for (const r of open.rows.slice(0, 2)) {
      const ev = await platform.pool.query<{ version: number; type: string }>("SELECT version, type FROM events WHERE stream_id = $1 ORDER BY version", [r.id]);
      out.push(`  ${r.id}: ${ev.rows.map((e) => `${e.version}:${e.type}`).join(" ")}`);
    }
  }
  for (const p of platform.processes) {
    if (p.exit && !p.exit.expected) continue;
    const t = trouble(platform, p);
    if (t.length > 0) out.push(`${p.service} pid ${p.pid}${p.exit ? " (stopped)" : ""} warnings/errors, last ${t.length}:`, ...t);
  }
  return out;
}

/**
 * One fault under load: a fresh platform on the cluster, `runs` counter runs in flight (all started, about
 * half of the first tool steps done; at least half of the runs not yet ended), the fault, then — with nothing done by hand — every run must end and
 * the invariants hold; every service not killed by the fault must still be its original process.
 */
export async function runFaultScenario(cluster: FaultCluster, fault: Fault, options: ScenarioOptions = {}): Promise<FaultReport> {
  const runs = options.runs ?? 30;
  const toolSteps = options.toolSteps ?? 3;
  const delayMs = options.delayMs ?? 700;
  const platform = await startFaultPlatform(cluster, { toolSteps, env: options.env });
  try {
    const original = new Map(dependencyOrder.map((s) => [s, platform.current[s]]));
    const ids = await platform.submitRuns(fault.name.replace(/\W+/g, "-"), runs, delayMs);
    const atFault = await waitFor(
      async () => {
        const p = await progress(platform, ids);
        return p.started === runs && p.effects >= runs / 2 ? p : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50, what: `all ${runs} runs started and half of their first tool steps done` },
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${(await diagnose(platform, ids)).join("\n")}`);
    });
    // The invariants are checked over all the runs; how many the fault hit in flight is reported.
    const inFlightAtFault = enoughInFlight(runs, atFault.terminal);

    // Watched from the moment the fault starts, so runs that end during a long outage are timed right.
    const faultAt = Date.now();
    let deadline = Number.POSITIVE_INFINITY;
    let doneAt = 0;
    const watching = waitFor(
      async () => {
        if (platform.unexpectedExits().length > 0) return "a service exited" as const;
        if (Date.now() > deadline) return "timed out" as const;
        if ((await progress(platform, ids)).terminal !== runs) return undefined;
        doneAt = Date.now();
        return "done" as const;
      },
      { timeoutMs: 3_600_000, intervalMs: 200, what: "every run to end" },
    );
    await fault.inject({ cluster, platform }).catch(async (err: Error) => {
      deadline = 0;
      await watching.catch(() => undefined);
      platform.keepLogs();
      throw new Error(`injecting "${fault.name}" failed: ${err.message}\n${(await diagnose(platform, ids)).join("\n")}\nlogs: ${platform.logDir}`);
    });
    const recoveredAt = Date.now();
    deadline = recoveredAt + (options.allDoneTimeoutMs ?? 90_000);
    const outcome = await watching;
    if (outcome !== "done") doneAt = Date.now();
    const allDone = outcome === "done";

    const violations: string[] = [];
    if (!allDone) {
      const ended = (await progress(platform, ids)).terminal;
      violations.push(
        `not every run ended (${outcome} after ${Math.round((doneAt - recoveredAt) / 1000)} s of recovery; ${ended}/${runs} terminal)`,
        ...(await diagnose(platform, ids)),
      );
    }
    const nc = await cluster.connectNats();
    const checked = await checkRunInvariants({
      pool: platform.pool,
      nc,
      namespace: platform.namespace,
      runIds: ids,
      toolSteps,
      delayMs,
      busTimeoutMs: allDone ? 30_000 : 2_000,
    })
      .catch((err: Error) => {
        throw new Error(`checking the invariants failed: ${err.stack}`);
      })
      .finally(() => nc.close().catch(() => undefined));
    violations.push(...checked.violations);

    // Processes: the ones the fault did not kill are the originals, alive; the restarted ones are alive.
    for (const service of dependencyOrder) {
      const now = platform.current[service];
      const killed = fault.kills?.includes(service);
      if (!killed && now !== original.get(service)) violations.push(`${service}: not the original process`);
      if (now.exit) {
        violations.push(
          `${service} pid ${now.pid} is gone (code ${now.exit.code}, signal ${now.exit.signal})${killed ? "" : " though the fault did not touch it"}`,
        );
      }
    }
    if (allDone) {
      for (const p of platform.unexpectedExits())
        violations.push(`${p.service} pid ${p.pid} exited by itself (code ${p.exit!.code}, signal ${p.exit!.signal})`);
    }

    const report: FaultReport = {
      fault: fault.name,
      runs,
      toolSteps,
      delayMs,
      inFlightAtFault,
      sideEffectsAtFault: atFault.effects,
      faultMs: recoveredAt - faultAt,
      faultToAllDoneMs: allDone ? doneAt - faultAt : null,
      // Negative: every run had ended before the fault was over.
      recoveredToAllDoneMs: allDone ? doneAt - recoveredAt : null,
      busCatchUpMs: checked.busCatchUpMs,
      states: checked.states,
      violations,
    };
    if (violations.length > 0) {
      platform.keepLogs();
      report.logDir = platform.logDir;
    }
    record(report);
    return report;
  } catch (err) {
    platform.keepLogs();
    (err as Error).message += `\nlogs: ${platform.logDir}`;
    throw err;
  } finally {
    await platform.teardown();
  }
}
