import { Type } from "@sinclair/typebox";
import type { Pool } from "@steward/platform";
import type { AnyToolDefinition } from "../../domain/tool";

/**
 * Tools that exist only when STEWARD_ENV=test, for the suites that prove the run contract: one with a side
 * effect the tests can count, one that always fails, one whose denial must end the run.
 */
export async function testTools(pool: Pool): Promise<AnyToolDefinition[]> {
  await pool.query(
    `CREATE TABLE IF NOT EXISTS test_side_effects (
       run_id uuid NOT NULL, key text NOT NULL, count integer NOT NULL, PRIMARY KEY (run_id, key))`,
  );
  const CounterInput = Type.Object(
    { key: Type.String({ minLength: 1, maxLength: 100 }), delay_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 5000 })) },
    { additionalProperties: false },
  );
  /** Counts one real execution for (run, key) and returns the count so far. */
  const countExecution = async (runId: string, key: string): Promise<number> => {
    const { rows } = await pool.query<{ count: number }>(
      `INSERT INTO test_side_effects (run_id, key, count) VALUES ($1, $2, 1)
       ON CONFLICT (run_id, key) DO UPDATE SET count = test_side_effects.count + 1 RETURNING count`,
      [runId, key],
    );
    return rows[0].count;
  };
  const NoInput = Type.Object({ note: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false });
  return [
    {
      name: "test_counter",
      description: "Test only: counts how many times it really ran for (run, key), after an optional delay.",
      input: CounterInput,
      normalise: (input: { key: string; delay_ms?: number }) => ({ key: input.key, delay_ms: input.delay_ms ?? 0 }),
      safety: "write",
      policyPoint: "knowledge.document.read",
      idempotent: true,
      abortOnDeny: false,
      requireConfirmation: false,
      exploration: false,
      async run(ctx, input: { key: string; delay_ms?: number }) {
        if (input.delay_ms) await new Promise((resolve) => setTimeout(resolve, input.delay_ms));
        return { result: { key: input.key, count: await countExecution(ctx.runId, input.key) } };
      },
    },
    {
      name: "test_explore",
      description: "Test only: an exploration tool (like listing tables): it counts against the exploration budget.",
      input: NoInput,
      normalise: (input: { note?: string }) => ({ note: input.note ?? "" }),
      safety: "read",
      policyPoint: "knowledge.document.read",
      idempotent: false,
      abortOnDeny: false,
      requireConfirmation: false,
      exploration: true,
      async run(_ctx, input: { note?: string }) {
        return { result: { explored: input.note ?? "" } };
      },
    },
    {
      name: "test_write",
      description: "Test only: a write that needs the user's approval; counts its real executions per (run, key).",
      input: CounterInput,
      normalise: (input: { key: string; delay_ms?: number }) => ({ key: input.key, delay_ms: input.delay_ms ?? 0 }),
      safety: "write",
      policyPoint: "knowledge.document.read",
      idempotent: true,
      abortOnDeny: false,
      requireConfirmation: true,
      exploration: false,
      async run(ctx, input: { key: string }) {
        return { result: { written: input.key, count: await countExecution(ctx.runId, `write:${input.key}`) } };
      },
    },
    {
      name: "test_focus",
      description: "Test only: moves the run to the 'focused' state, which unlocks test_focused_only.",
      input: NoInput,
      normalise: (input: { note?: string }) => ({ note: input.note ?? "" }),
      safety: "read",
      policyPoint: "knowledge.document.read",
      idempotent: false,
      abortOnDeny: false,
      requireConfirmation: false,
      exploration: false,
      async run() {
        return { result: { focused: true }, nextState: "focused" };
      },
    },
    {
      name: "test_focused_only",
      description: "Test only: offered only in the 'focused' state.",
      input: NoInput,
      normalise: (input: { note?: string }) => ({ note: input.note ?? "" }),
      safety: "read",
      policyPoint: "knowledge.document.read",
      idempotent: false,
      abortOnDeny: false,
      requireConfirmation: false,
      exploration: false,
      states: ["focused"],
      async run() {
        return { result: { ok: true } };
      },
    },
    {
      name: "test_fail",
      description: "Test only: always fails, with an internal error text that must never reach the model.",
      input: NoInput,
      normalise: (input: { note?: string }) => ({ note: input.note ?? "" }),
      safety: "read",
      policyPoint: "knowledge.document.read",
      idempotent: false,
      abortOnDeny: false,
      requireConfirmation: false,
      exploration: false,
      async run() {
        throw new Error("connection to 10.0.0.7 refused; password=hunter2");
      },
    },
    {
      name: "test_guarded",
      description: "Test only: a tool the run depends on (AbortOnDeny) behind a point members do not hold.",
      input: NoInput,
      normalise: (input: { note?: string }) => ({ note: input.note ?? "" }),
      safety: "read",
      policyPoint: "knowledge.document.write",
      idempotent: false,
      abortOnDeny: true,
      requireConfirmation: false,
      exploration: false,
      async run() {
        return { result: { ran: true } };
      },
    },
  ];
}
