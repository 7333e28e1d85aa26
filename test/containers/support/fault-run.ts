import { jetstreamManager } from "@nats-io/jetstream";
import type { StartedTestContainer } from "testcontainers";
import { busNames } from "@steward/contract";
import { enoughInFlight } from "../../support/faults/in-flight";
import { checkRunInvariants } from "../../support/faults/invariants";
import { record } from "../../support/faults/report";
import { waitFor } from "../../support/wait-for";
import { progress, submitRuns } from "./load";
import { noteEffects } from "./note-effects";
import type { Topology } from "./topology";

export interface ContainerFault {
  readonly name: string;
  /** The containers the fault stopped, killed or restarted (asked once it is over): the others must keep running untouched. */
  touches(t: Topology): StartedTestContainer[];
  /** Injects the fault; resolves when it is over (containers back, network restored). */
  inject(t: Topology): Promise<void>;
}

export interface ContainerFaultReport {
  fault: string;
  runs: number;
  toolSteps: number;
  delayMs: number;
  /** Runs not yet ended when the fault came. */
  inFlightAtFault: number;
  sideEffectsAtFault: number;
  /** How long the injection took (the outage itself, restarts included), in ms. */
  faultMs: number;
  /** From the start of the fault until every run was terminal (null: not all ended). */
  faultToAllDoneMs: number | null;
  /** From the end of the fault until every run was terminal; negative when all ended during the fault. */
  recoveredToAllDoneMs: number | null;
  busCatchUpMs: number | null;
  states: Record<string, number>;
  violations: string[];
  /** The runs (not in the report line). */
  runIds?: string[];
}

/** Every container of the topology by a readable name. */
function containersOf(t: Topology): Map<string, StartedTestContainer> {
  const all = new Map<string, StartedTestContainer>([["postgres", t.postgres]]);
  t.nats.forEach((n, i) => all.set(`nats${i + 1}`, n));
  for (const [name, s] of t.services) all.set(name, s.container);
  return all;
}

async function startedAt(t: Topology, c: StartedTestContainer): Promise<{ running: boolean; startedAt: string }> {
  const info = await t.handle(c).inspect();
  return { running: info.State.Running && !info.State.Paused, startedAt: info.State.StartedAt };
}

/** What stuck runs and unhappy services look like, for the failure message. */
async function diagnose(t: Topology, ids: string[]): Promise<string[]> {
  const out: string[] = [];
  const open = await t.pool
    .query<{ state: string; owner: string | null; n: number }>(
      `SELECT state, lease_owner AS owner, count(*)::int AS n FROM runs
        WHERE id = ANY($1::uuid[]) AND state NOT IN ('succeeded', 'failed', 'cancelled') GROUP BY 1, 2`,
      [ids],
    )
    .catch(() => ({ rows: [] as Array<{ state: string; owner: string | null; n: number }> }));
  if (open.rows.length > 0) out.push(`not terminal: ${open.rows.map((r) => `${r.n} ${r.state}/${r.owner ?? "no lease"}`).join(", ")}`);
  for (const [name, c] of containersOf(t)) {
    if (name === "postgres" || name.startsWith("nats")) continue;
    const lines = (await t.logTail(c, 200).catch(() => "")).split("\n").filter((l) => /"level":(4|5|6)\d/.test(l) || /^\w*Error/.test(l));
    if (lines.length > 0) out.push(`${name}, last warnings/errors:`, ...lines.slice(-4).map((l) => `    ${l.slice(0, 300)}`));
  }
  return out;
}

/**
 * One fault under load on a running topology: `runs` note runs in flight (all started, about half of
 * their first notes saved), the fault, then — with nothing done by hand — every run must end and the
 * invariants hold: terminal exactly once, versions without gap, the same events on the replicated stream,
 * each side effect exactly once and after a permit. Containers the fault does not touch must not have
 * restarted.
 */
export async function runContainerFault(
  t: Topology,
  fault: ContainerFault,
  options: { runs?: number; delayMs?: number; allDoneTimeoutMs?: number } = {},
): Promise<ContainerFaultReport> {
  // 32 submitted; on a loaded machine the first runs can be through all their steps before the last one starts,
  // so the fault must find at least half of them in flight (the process fault suites' rule).
  const runs = options.runs ?? 32;
  const delayMs = options.delayMs ?? 700;
  const ids = await submitRuns(t, fault.name.replace(/\W+/g, "-"), runs, delayMs);
  const atFault = await waitFor(
    async () => {
      const p = await progress(t, ids);
      return p.started === runs && p.effects >= runs / 2 ? p : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 100, what: `all ${runs} runs started and half of their first tool steps done` },
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}\n${(await diagnose(t, ids)).join("\n")}`);
  });
  enoughInFlight(runs, atFault.terminal);

  const before = new Map<string, { running: boolean; startedAt: string }>();
  for (const [name, c] of containersOf(t)) before.set(name, await startedAt(t, c));

  const faultAt = Date.now();
  let deadline = Number.POSITIVE_INFINITY;
  let doneAt = 0;
  const watching = waitFor(
    async () => {
      if (Date.now() > deadline) return "timed out" as const;
      const p = await progress(t, ids);
      if (p.terminal !== runs) return undefined;
      doneAt = Date.now();
      return "done" as const;
    },
    // PostgreSQL may be down meanwhile: a failed probe is retried, the deadline bounds it.
    { timeoutMs: 3_600_000, intervalMs: 250, what: "every run to end" },
  );
  await fault.inject(t).catch(async (err: Error) => {
    deadline = 0;
    await watching.catch(() => undefined);
    throw new Error(`injecting "${fault.name}" failed: ${err.message}\n${(await diagnose(t, ids)).join("\n")}`);
  });
  const recoveredAt = Date.now();
  const touched = new Set(fault.touches(t).map((c) => c.getId()));
  deadline = recoveredAt + (options.allDoneTimeoutMs ?? 120_000);
  const outcome = await watching;
  const allDone = outcome === "done";
  if (!allDone) doneAt = Date.now();

  const violations: string[] = [];
  if (!allDone) {
    violations.push(`not every run ended (${outcome} after ${Math.round((doneAt - recoveredAt) / 1000)} s of recovery)`, ...(await diagnose(t, ids)));
  }
  const nc = await t.connectNats();
  // After a restart of the whole cluster JetStream answers only once it has a leader again; the runs may
  // have ended before (they need PostgreSQL, not the bus): the bus is compared once it answers.
  const events = busNames(t.namespace).eventStream;
  const busBack = await waitFor(
    async () => {
      await (await jetstreamManager(nc, { timeout: 2000 })).streams.info(events);
      return true;
    },
    { timeoutMs: 90_000, intervalMs: 500, what: "JetStream to answer for the event stream" },
  ).catch((err: Error) => err);
  if (busBack instanceof Error) violations.push(busBack.message);
  const checked = await checkRunInvariants({
    pool: t.pool,
    nc,
    namespace: t.namespace,
    runIds: ids,
    toolSteps: t.toolSteps,
    delayMs,
    effects: noteEffects,
    // After a restart of the whole cluster the relays catch up once every stream has a leader again: up to a few
    // seconds here (docs/operations.md). A bound, not a target: the report gives the time.
    busTimeoutMs: allDone ? 90_000 : 2_000,
  }).finally(() => nc.close().catch(() => undefined));
  violations.push(...checked.violations);

  for (const [name, c] of containersOf(t)) {
    const now = await startedAt(t, c);
    if (!now.running) violations.push(`${name} is not running after the fault`);
    if (!touched.has(c.getId()) && now.startedAt !== before.get(name)!.startedAt) violations.push(`${name} restarted though the fault did not touch it`);
  }

  const report: ContainerFaultReport = {
    fault: fault.name,
    runs,
    toolSteps: t.toolSteps,
    delayMs,
    inFlightAtFault: runs - atFault.terminal,
    sideEffectsAtFault: atFault.effects,
    faultMs: recoveredAt - faultAt,
    faultToAllDoneMs: allDone ? doneAt - faultAt : null,
    recoveredToAllDoneMs: allDone ? doneAt - recoveredAt : null,
    busCatchUpMs: checked.busCatchUpMs,
    states: checked.states,
    violations,
  };
  record(report, "container fault report");
  return { ...report, runIds: ids };
}
