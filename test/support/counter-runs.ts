import type pg from "pg";
import type { ChatRequest, Reply } from "./fake-openai";
import type { TestPlatform } from "./platform";

/**
 * A deterministic model for the durability suites. Each run's input carries a tag and a tool delay
 * (`[tag:<tag>] [delay:<ms>]`); the model calls `test_counter` with key `k<step>` for `toolSteps` steps, one
 * call per step, then answers with text. The step of a request is known from the tool results it carries,
 * so the script needs no state of its own. Every request is recorded under its run's tag.
 */
export function counterModel(toolSteps = 2) {
  const asked = new Map<string, number[]>();
  const script = (req: ChatRequest): Reply => {
    const input = String(req.messages.find((m) => m.role === "user")?.content ?? "");
    const tag = /\[tag:([^\]]+)\]/.exec(input)?.[1] ?? "untagged";
    const delayMs = Number(/\[delay:(\d+)\]/.exec(input)?.[1] ?? 0);
    const step = req.messages.filter((m) => m.role === "tool").length + 1;
    asked.set(tag, [...(asked.get(tag) ?? []), step]);
    if (step <= toolSteps) {
      return { toolCalls: [{ id: `call_${step}`, name: "test_counter", arguments: JSON.stringify({ key: `k${step}`, delay_ms: delayMs }) }] };
    }
    return { text: `done ${tag}` };
  };
  return {
    script,
    /** The steps the model was asked for, per run tag, in arrival order. */
    asked,
  };
}

export function counterInput(tag: string, delayMs: number): string {
  return `Count for me [tag:${tag}] [delay:${delayMs}]`;
}

/** Creates `count` runs through the gateway, tagged `<prefix>-<i>`; resolves with their ids by tag. */
export async function submitCounterRuns(
  platform: TestPlatform,
  token: string,
  prefix: string,
  count: number,
  delayMs: number,
): Promise<Array<{ tag: string; id: string }>> {
  const runs: Array<{ tag: string; id: string }> = [];
  for (let i = 0; i < count; i++) {
    const tag = `${prefix}-${i}`;
    const created = await platform.http("POST", "/v1/agents/runs", { token, body: { input: counterInput(tag, delayMs) } });
    if (created.status !== 201) throw new Error(`run ${tag} was not created: ${created.status} ${JSON.stringify(created.body)}`);
    runs.push({ tag, id: created.body.id });
  }
  return runs;
}

/** Polls the runs projection until every run is terminal (bounded); resolves with the states by id. */
export async function terminalStates(pool: pg.Pool, ids: string[]): Promise<Map<string, string> | undefined> {
  const { rows } = await pool.query<{ id: string; state: string }>("SELECT id, state FROM runs WHERE id = ANY($1::uuid[])", [ids]);
  const states = new Map(rows.map((r) => [r.id, r.state]));
  const open = ids.filter((id) => !["succeeded", "failed", "cancelled"].includes(states.get(id) ?? "missing"));
  return open.length === 0 ? states : undefined;
}

/** What a finished counter run left behind, in a form that compares with `expectedCounterRun`. */
export interface CounterRunRecord {
  state: string;
  /** Event versions in commit order: 1..n with no gap and no duplicate. */
  versions: number[];
  /** The event types this suite drives, in order (audit-only types such as `tool.decided` left out). */
  types: string[];
  /** `<type> <call_id>` of every per-call event recorded more than once. */
  repeatedCallEvents: string[];
  /** step_no of every recorded model answer (thought or message): one per model step. */
  answeredSteps: number[];
  toolCallIds: string[];
  toolResultIds: string[];
  /** The side-effect counter of `test_counter`, by key. */
  sideEffects: Record<string, number>;
  /** The steps the model was asked for, sorted. */
  askedSteps: number[];
}

const coreTypes = new Set(["run.queued", "run.started", "thought", "tool_call", "tool_result", "message", "run.succeeded", "run.failed", "run.cancelled"]);

function repeated(items: string[]): string[] {
  return [...new Set(items.filter((x, i) => items.indexOf(x) !== i))];
}

export async function counterRunRecords(
  pool: pg.Pool,
  runs: Array<{ tag: string; id: string }>,
  asked: Map<string, number[]>,
): Promise<Record<string, CounterRunRecord>> {
  const ids = runs.map((r) => r.id);
  const states = await pool.query<{ id: string; state: string }>("SELECT id, state FROM runs WHERE id = ANY($1::uuid[])", [ids]);
  const events = await pool.query<{ stream_id: string; version: number; type: string; data: any }>(
    "SELECT stream_id, version, type, data FROM events WHERE stream_id = ANY($1::uuid[]) ORDER BY global_position",
    [ids],
  );
  const effects = await pool.query<{ run_id: string; key: string; count: number }>(
    "SELECT run_id, key, count FROM test_side_effects WHERE run_id = ANY($1::uuid[]) ORDER BY key",
    [ids],
  );
  const out: Record<string, CounterRunRecord> = {};
  for (const { tag, id } of runs) {
    const mine = events.rows.filter((e) => e.stream_id === id);
    out[`${tag} ${id}`] = {
      state: states.rows.find((r) => r.id === id)?.state ?? "missing",
      versions: mine.map((e) => e.version),
      types: mine.map((e) => e.type).filter((t) => coreTypes.has(t)),
      repeatedCallEvents: repeated(mine.filter((e) => typeof e.data?.call_id === "string").map((e) => `${e.type} ${e.data.call_id}`)),
      answeredSteps: mine.filter((e) => e.type === "thought" || e.type === "message").map((e) => e.data.step_no),
      toolCallIds: mine.filter((e) => e.type === "tool_call").map((e) => e.data.call_id),
      toolResultIds: mine.filter((e) => e.type === "tool_result").map((e) => e.data.call_id),
      sideEffects: Object.fromEntries(effects.rows.filter((r) => r.run_id === id).map((r) => [r.key, r.count])),
      askedSteps: [...(asked.get(tag) ?? [])].sort((a, b) => a - b),
    };
  }
  return out;
}

/**
 * The record of a counter run that succeeded with each step done exactly once (two tool steps, then text).
 * `versions` must be 1..n for the n events the run has.
 */
export function expectedCounterRun(actual: CounterRunRecord): CounterRunRecord {
  return { ...expectedShape, versions: actual.versions.map((_, i) => i + 1) };
}

/** Compares every run's record with the expected one, in one assertion whose diff names the runs that differ. */
export function expectedCounterRuns(records: Record<string, CounterRunRecord>): Record<string, CounterRunRecord> {
  return Object.fromEntries(Object.entries(records).map(([k, v]) => [k, expectedCounterRun(v)]));
}

const expectedShape: CounterRunRecord = {
  state: "succeeded",
  versions: [],
  types: ["run.queued", "run.started", "thought", "tool_call", "tool_result", "thought", "tool_call", "tool_result", "message", "run.succeeded"],
  repeatedCallEvents: [],
  answeredSteps: [1, 2, 3],
  toolCallIds: ["call_1", "call_2"],
  toolResultIds: ["call_1", "call_2"],
  sideEffects: { k1: 1, k2: 1 },
  askedSteps: [1, 2, 3],
};
