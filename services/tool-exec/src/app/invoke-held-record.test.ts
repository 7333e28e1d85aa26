import { randomUUID } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { createLogger } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";
import { advisoryLocks, useFreshDatabase } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";
import { createPgIdempotencyStore } from "../adapters/pg/idempotency-store";
import { createToolRegistry } from "../domain/registry";
import { specTool } from "./fixtures/spec-tool";
import { CallerGoneError, createInvokeHandler, type InvokeCommand } from "./invoke-tool";

/**
 * A held call's record on real PostgreSQL (docs/architecture.md, "A tool call sent with its commit"): opened as
 * the call arrives, before its release; given back when the call is dropped; and given back when the release is
 * slow, so that the runner taking the run over is not kept waiting by a stalled runner's call.
 */
describe("the record of a call sent held", () => {
  const db = useFreshDatabase("steward_tool_exec_held", 6);

  beforeAll(async () => {
    await db.pool.query("CREATE TABLE effects (run_id uuid, key text)");
  });

  const permit: PolicyDecisionApi = {
    decide: async () => ({ permit: true, code: "", reasons: [], policyIds: ["p"] }) as never,
    state: () => "READY" as never,
    close: () => undefined,
  };
  /** An idempotent write whose effect commits with its record, as `test_counter`'s does. */
  const counter = specTool(
    "counter",
    "write",
    async (ctx, input) => {
      await ctx.transaction!.query("INSERT INTO effects VALUES ($1, $2)", [ctx.runId, (input as { key: string }).key]);
      return { result: { counted: true } };
    },
    { input: Type.Object({ key: Type.String() }, { additionalProperties: false }) },
  );
  /** `heldGraceMs` long enough that a busy machine opens a record well within it. */
  const handler = (heldGraceMs: number) =>
    createInvokeHandler({
      registry: createToolRegistry([counter]),
      pdp: permit,
      results: createPgIdempotencyStore(db.pool),
      logger: createLogger("tool-exec", "silent"),
      heldGraceMs,
    });

  const effects = async (runId: string) => Number((await db.pool.query("SELECT count(*) AS n FROM effects WHERE run_id = $1", [runId])).rows[0].n);
  /** The records held open: their advisory locks, granted. */
  const recordsHeld = () => advisoryLocks(db.pool, true);
  const callOf = (runId: string, released?: Promise<void>): InvokeCommand => ({
    runId,
    tenantId: "acme",
    userId: "alice",
    stepNo: 1,
    callId: randomUUID(),
    toolName: "counter",
    argumentsJson: JSON.stringify({ key: "k1" }),
    elevationSessionId: "",
    released,
  });
  function releaseHandle() {
    let go!: () => void;
    let drop!: (err: Error) => void;
    const released = new Promise<void>((resolve, reject) => {
      go = resolve;
      drop = reject;
    });
    return { released, go, drop };
  }

  it("given a held call, then its record is held before the release; when dropped, it is let go and nothing ran", async () => {
    const invoke = handler(60_000);
    const runId = randomUUID();
    const held = releaseHandle();
    const call = invoke(callOf(runId, held.released));
    call.catch(() => undefined);
    await waitFor(async () => ((await recordsHeld()) === 1 ? true : undefined), { what: "the held call's record held" });
    held.drop(new Error("the runner's commit failed"));
    await expect(call).rejects.toBeInstanceOf(CallerGoneError);
    await waitFor(async () => ((await recordsHeld()) === 0 ? true : undefined), { what: "the dropped call's record let go" });
    expect(await effects(runId)).toBe(0);
  });

  it("given a held call whose release does not come, then a repeat of the call by another runner runs once its grace has passed; the late release is answered from the record", async () => {
    const invoke = handler(1000);
    const runId = randomUUID();
    const stalled = releaseHandle();
    const first = invoke(callOf(runId, stalled.released));
    await waitFor(async () => ((await recordsHeld()) === 1 ? true : undefined), { what: "the stalled call's record held" });

    // The runner that took the run over sends the call again, plain: it waits for the record (queued on its lock)
    // until the grace lets it go, then runs.
    const repeat = invoke(callOf(runId));
    await waitFor(async () => ((await advisoryLocks(db.pool, false)) === 1 ? true : undefined), { what: "the repeat queued behind the stalled call" });
    await expect(repeat).resolves.toMatchObject({ resultCode: "ok", replayed: false });
    expect(await effects(runId)).toBe(1);

    // The stalled runner wakes up and releases its call: the record says it was made; nothing runs again.
    stalled.go();
    await expect(first).resolves.toMatchObject({ resultCode: "ok", replayed: true });
    expect(await effects(runId)).toBe(1);
    expect(await recordsHeld()).toBe(0);
  });
});
