import type pg from "pg";
import { jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@steward/contract";
import type { NatsConnection } from "@steward/platform";
import { readSubject } from "../bus";
import { waitFor } from "../wait-for";
import { counterEffects, permitTimes, permitsBefore, type SideEffects } from "./side-effects";

const TERMINAL = ["run.succeeded", "run.failed", "run.cancelled"];

export interface InvariantInput {
  /** Straight to the server. */
  readonly pool: pg.Pool;
  /** Straight to nats-server. */
  readonly nc: NatsConnection;
  readonly namespace: string;
  readonly runIds: readonly string[];
  /** Side-effecting tool calls per run: keys k1..k<toolSteps>. */
  readonly toolSteps: number;
  /** The delay_ms every test_counter call carried (part of the call's fingerprint). */
  readonly delayMs: number;
  /** Where the runs' side effects are read. Default: test_counter's (`counterEffects(delayMs)`). */
  readonly effects?: SideEffects;
  /** How long the bus may take to carry the last events after the runs ended. Default 30 s. */
  readonly busTimeoutMs?: number;
}

export interface InvariantResult {
  /** One line per broken invariant, naming how many runs break it and a few of them. */
  readonly violations: string[];
  /** Runs per projected state. */
  readonly states: Record<string, number>;
  /** Time from the call until the bus held as many of the runs' events as PostgreSQL, in ms. */
  readonly busCatchUpMs: number | null;
}

interface EventRow {
  stream_id: string;
  version: number;
  event_id: string;
  type: string;
}

/** Groups per-run problems into one line per invariant, with a few examples, so a failure diff stays readable. */
function collector() {
  const found = new Map<string, string[]>();
  return {
    add(invariant: string, detail: string) {
      found.set(invariant, [...(found.get(invariant) ?? []), detail]);
    },
    lines(): string[] {
      return [...found].map(([inv, details]) => `${inv}: ${details.length} broken, e.g. ${details.slice(0, 3).join("; ")}`);
    },
  };
}

/**
 * The fault suites' invariants over a set of runs whose tool steps each leave a side effect (test_counter's count,
 * or a note): each run terminal exactly once; versions 1..n
 * without gap; the same events (ids, order) on the event stream as in PostgreSQL; each side effect exactly
 * once; every execution preceded by a permit in the policy decision log for that run and call.
 */
export async function checkRunInvariants(input: InvariantInput): Promise<InvariantResult> {
  const ids = [...input.runIds];
  const problems = collector();

  const events = (
    await input.pool.query<EventRow>(
      "SELECT stream_id, version, event_id::text, type FROM events WHERE stream_id = ANY($1::uuid[]) ORDER BY stream_id, version",
      [ids],
    )
  ).rows;
  const byRun = new Map<string, EventRow[]>(ids.map((id) => [id, []]));
  for (const e of events) byRun.get(e.stream_id)!.push(e);
  const runs = (
    await input.pool.query<{ id: string; state: string; code: string | null }>(
      "SELECT id, state, error->>'code' AS code FROM runs WHERE id = ANY($1::uuid[])",
      [ids],
    )
  ).rows;
  const stateOf = new Map(runs.map((r) => [r.id, r.code ? `${r.state} ${r.code}` : r.state]));
  // A run that failed counts under its state and code ("failed 60402"), so a report says why.
  const states: Record<string, number> = {};
  for (const id of ids) {
    const s = stateOf.get(id) ?? "missing";
    states[s] = (states[s] ?? 0) + 1;
  }

  for (const [id, mine] of byRun) {
    const terminal = mine.filter((e) => TERMINAL.includes(e.type));
    const last = mine[mine.length - 1];
    if (terminal.length !== 1 || last?.type !== terminal[0]?.type || stateOf.get(id) !== terminal[0].type.slice("run.".length)) {
      problems.add(
        "every run terminal exactly once",
        `${id}: ${terminal.length} terminal events (${terminal.map((e) => `${e.version}:${e.type}`).join(",")}), last ${last ? `${last.version}:${last.type}` : "none"}, state ${stateOf.get(id) ?? "missing"}`,
      );
    }
    const gap = mine.findIndex((e, i) => e.version !== i + 1);
    if (gap >= 0) problems.add("event versions 1..n without gap (PostgreSQL)", `${id}: versions ${mine.map((e) => e.version).join(",")}`);
  }

  // The bus: wait until it holds at least as many of each run's events as PostgreSQL, then compare ids in order.
  const names = busNames(input.namespace);
  const jsm = await jetstreamManager(input.nc);
  const began = Date.now();
  const busCounts = async (): Promise<Map<string, number>> => {
    const info = await jsm.streams.info(names.eventStream, { subjects_filter: names.allEvents });
    const counts = new Map<string, number>();
    for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
      const runId = subject.slice(names.allEvents.length - 1).split(".")[0];
      counts.set(runId, (counts.get(runId) ?? 0) + n);
    }
    return counts;
  };
  const caughtUp = await waitFor(
    async () => {
      const counts = await busCounts();
      return ids.every((id) => (counts.get(id) ?? 0) >= byRun.get(id)!.length) ? true : undefined;
    },
    { timeoutMs: input.busTimeoutMs ?? 30_000, intervalMs: 250, what: "the event stream to carry every stored event" },
  ).then(
    () => true,
    () => false,
  );
  const busCatchUpMs = caughtUp ? Date.now() - began : null;
  for (const id of ids) {
    const onBus = await readSubject(input.nc, names.eventStream, names.runEvents(id), 10_000);
    const busIds = onBus.map((m) => m.headers["Nats-Msg-Id"] ?? m.json?.metadata?.event_id);
    const pgIds = byRun.get(id)!.map((e) => e.event_id);
    if (busIds.join() !== pgIds.join()) {
      // The bus order as PostgreSQL versions (x: an id PostgreSQL does not have), from the first difference on.
      const versionOf = new Map(pgIds.map((e, i) => [e, i + 1]));
      const at = Math.max(
        0,
        pgIds.findIndex((e, i) => busIds[i] !== e),
      );
      const busOrder = busIds.slice(at, at + 6).map((e, i) => `${versionOf.get(e) ?? "x"}@${onBus[at + i].seq}`);
      problems.add(
        "the same events, in the same order, on the event stream",
        `${id}: ${pgIds.length} in PostgreSQL, ${busIds.length} on the bus; from position ${at + 1} the bus has versions (@stream sequence) ${busOrder.join(",")}`,
      );
    }
  }

  // Side effects: k1..k<toolSteps>, each exactly once; nothing else.
  const ledger = input.effects ?? counterEffects(input.delayMs);
  const effects = await ledger.read(input.pool, ids);
  const expectedKeys = Array.from({ length: input.toolSteps }, (_, i) => `k${i + 1}`);
  for (const id of ids) {
    const mine = new Map(effects.filter((e) => e.run_id === id).map((e) => [e.key, e.count]));
    const wrong = [...new Set([...expectedKeys, ...mine.keys()])].filter((k) => mine.get(k) !== (expectedKeys.includes(k) ? 1 : undefined));
    if (wrong.length > 0) problems.add("each side effect exactly once", `${id}: ${wrong.map((k) => `${k}=${mine.get(k) ?? 0}`).join(",")}`);
  }

  // Every execution after a permit for that run and call (same fingerprint), by the server's clock: the first
  // execution after at least one permit, and the n-th (last) after at least n permits.
  const permits = await permitTimes(input.pool, ids, ledger.tool);
  for (const e of effects) {
    const beforeFirst = permitsBefore(permits, e, e.first_us);
    const beforeLast = permitsBefore(permits, e, e.last_us);
    if (beforeFirst < 1 || beforeLast < e.count) {
      problems.add(
        "no tool execution without a permit recorded before it",
        `${e.run_id} ${e.key}: ${e.count} executions, ${beforeFirst} permits before the first, ${beforeLast} before the last`,
      );
    }
  }

  return { violations: problems.lines(), states, busCatchUpMs };
}
