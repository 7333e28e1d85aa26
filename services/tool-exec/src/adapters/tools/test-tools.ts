import { setTimeout as sleep } from "node:timers/promises";
import { Type } from "@sinclair/typebox";
import type { Pool } from "@steward/platform";
import type { AnyToolDefinition, ToolContext, ToolOutcome } from "../../domain/tool";

const CounterInput = Type.Object(
  { key: Type.String({ minLength: 1, maxLength: 100 }), delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 5000 })) },
  { additionalProperties: false },
);
const NoteInput = Type.Object({ note: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false });
const BigInput = Type.Object({ bytes: Type.Integer({ minimum: 1, maximum: 4_000_000 }) }, { additionalProperties: false });

type Counter = { key: string; delay_ms?: number };
type Note = { note?: string };

/** A test tool: the defaults (read, knowledge.document.read, no flags) unless the definition says otherwise. */
function testTool<I>(
  name: string,
  description: string,
  run: (ctx: ToolContext, input: I) => Promise<ToolOutcome>,
  more: Partial<AnyToolDefinition> = {},
): AnyToolDefinition {
  return {
    name,
    description: `Test only: ${description}`,
    input: NoteInput,
    normalise: (input: Note) => ({ note: input.note ?? "" }),
    safety: "read",
    policyPoint: "knowledge.document.read",
    idempotent: false,
    abortOnDeny: false,
    requireConfirmation: false,
    exploration: false,
    run,
    ...more,
  };
}

const counterShape = { input: CounterInput, normalise: (i: Counter) => ({ key: i.key, delay_ms: i.delay_ms ?? 0 }) };

/**
 * Tools that exist only when STEWARD_ENV=test, for the suites that prove the run contract: ones with a side
 * effect the tests can count, a read whose result is kept (the bench's read iterations), one that always fails,
 * one whose denial must end the run, an exploration tool, a pair that exercises the agent-state matrix, and one
 * that reports the decisions logged before it ran.
 */
export async function testTools(pool: Pool): Promise<AnyToolDefinition[]> {
  // first_at / last_at (the server's clock, as the policy decision log's decided_at) let the fault suite
  // check every execution against a permit recorded before it.
  await pool.query(
    `CREATE TABLE IF NOT EXISTS test_side_effects (
       run_id uuid NOT NULL, key text NOT NULL, count integer NOT NULL,
       first_at timestamptz NOT NULL DEFAULT clock_timestamp(), last_at timestamptz NOT NULL DEFAULT clock_timestamp(),
       PRIMARY KEY (run_id, key))`,
  );
  /**
   * Counts one real execution for (run, key) and returns the count so far. Written in the call's idempotency
   * transaction when there is one, as a tool with an effect in Steward's database should: the count then
   * commits with the record, so a fault between the two can never make it count twice.
   */
  const countExecution = async (ctx: ToolContext, key: string): Promise<number> => {
    const runId = ctx.runId;
    const { rows } = await (ctx.transaction ?? pool).query<{ count: number }>(
      `INSERT INTO test_side_effects (run_id, key, count) VALUES ($1, $2, 1)
       ON CONFLICT (run_id, key) DO UPDATE SET count = test_side_effects.count + 1, last_at = clock_timestamp() RETURNING count`,
      [runId, key],
    );
    return rows[0].count;
  };
  return [
    testTool<Counter>(
      "test_counter",
      "counts how many times it really ran for (run, key), after an optional delay.",
      async (ctx, input) => {
        // The delay stands for the tool's work: it stops when the call's signal does, as a real tool's would.
        if (input.delay_ms) await sleep(input.delay_ms, undefined, { signal: ctx.signal });
        return { result: { key: input.key, count: await countExecution(ctx, input.key) } };
      },
      { ...counterShape, safety: "write", idempotent: true },
    ),
    testTool<Counter>(
      "test_lookup",
      "reads how many times test_counter ran for (run, key), changing nothing; its result is kept by tool-exec.",
      async (ctx, input) => {
        const { rows } = await pool.query<{ count: number }>("SELECT count FROM test_side_effects WHERE run_id = $1 AND key = $2", [ctx.runId, input.key]);
        return { result: { key: input.key, count: rows[0]?.count ?? 0 } };
      },
      { ...counterShape, idempotent: true },
    ),
    testTool<Counter>(
      "test_write",
      "a write that needs the user's approval; counts its real executions per (run, key).",
      async (ctx, input) => ({ result: { written: input.key, count: await countExecution(ctx, `write:${input.key}`) } }),
      { ...counterShape, safety: "write", idempotent: true, requireConfirmation: true },
    ),
    testTool<Note>(
      "test_explore",
      "an exploration tool (like listing tables): it counts against the exploration budget.",
      async (_ctx, input) => ({ result: { explored: input.note ?? "" } }),
      { exploration: true },
    ),
    testTool("test_focus", "moves the run to the 'focused' state, which unlocks test_focused_only.", async () => ({
      result: { focused: true },
      nextState: "focused",
    })),
    testTool("test_focused_only", "offered only in the 'focused' state.", async () => ({ result: { ok: true } }), { states: ["focused"] }),
    testTool("test_fail", "always fails, with an internal error text that must never reach the model.", async () => {
      throw new Error("connection to 10.0.0.7 refused; password=hunter2");
    }),
    testTool<{ bytes: number }>(
      "test_big_result",
      "answers one row whose text cell is `bytes` characters long (a dataset cell too big for an event).",
      async (_ctx, input) => ({
        result: { columns: ["id", "body"], rows: [[1, "0123456789".repeat(Math.ceil(input.bytes / 10)).slice(0, input.bytes)]], row_count: 1 },
      }),
      { input: BigInput, normalise: (i: { bytes: number }) => ({ bytes: i.bytes }) },
    ),
    // Reads on tool-exec's own connection, so it sees only what the policy service had committed when it ran.
    testTool("test_witness", "reports the policy decisions already committed for its own call (run, step, tool) at the moment it runs.", async (ctx) => {
      const { rows } = await pool.query<{ fingerprint: string | null; permit: boolean }>(
        "SELECT fingerprint, permit FROM policy_decisions WHERE run_id = $1 AND step_no = $2 AND resource_id = 'test_witness' ORDER BY id",
        [ctx.runId, ctx.stepNo],
      );
      return { result: { decisions_seen: rows } };
    }),
    testTool("test_guarded", "a tool the run depends on (AbortOnDeny) behind a point members do not hold.", async () => ({ result: { ran: true } }), {
      policyPoint: "knowledge.document.write",
      abortOnDeny: true,
    }),
  ];
}
