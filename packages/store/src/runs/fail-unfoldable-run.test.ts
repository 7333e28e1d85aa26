import { randomUUID } from "node:crypto";
import { addSeconds, initialRunState, nowMicros, type RunError, type RunEvent } from "@steward/contract";
import { ConcurrencyError } from "@steward/platform";
import { appendRunEvents } from "./append-run-events";
import { failUnfoldableRun } from "./fail-unfoldable-run";
import { readStream } from "../event-store/read-stream";
import { useFreshDatabase } from "../../../../test/support/databases";
import { untilAnEventInsertWaits } from "../../../../test/support/lock-waits";

const ERROR: RunError = { code: 60302, message: "the run's recorded events cannot be read" };

function queued(): RunEvent {
  const createdAt = nowMicros();
  return {
    type: "run.queued",
    data: {
      input: "hi",
      mode: "agent",
      response_language: null,
      created_by: "u1",
      created_at: createdAt,
      deadline_at: addSeconds(createdAt, 180),
      thread_id: null,
    },
  };
}

describe("failUnfoldableRun (PostgreSQL)", () => {
  const db = useFreshDatabase("steward_store_unfoldable");
  const input = (runId: string) => ({ runId, tenantId: "acme", namespace: "fur" });

  it("appends run.failed after the last stored seq, whatever the stored events say, and fails the projection", async () => {
    const runId = randomUUID();
    await appendRunEvents(db.pool, { runId, tenantId: "acme", namespace: "fur", state: initialRunState, events: [queued()] });
    await db.pool.query("INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, 'acme', 2, 'garbled', '{}')", [
      randomUUID(),
      runId,
    ]);

    const stored = await failUnfoldableRun(db.pool, input(runId));
    expect(stored).toMatchObject({ type: "run.failed", data: { error: ERROR }, metadata: { seq: 3, run_id: runId } });
    expect((await readStream(db.pool, runId)).map((e) => e.type)).toEqual(["run.queued", "garbled", "run.failed"]);
    const { rows } = await db.pool.query("SELECT state, error, version, input FROM runs WHERE id = $1", [runId]);
    expect(rows[0]).toEqual({ state: "failed", error: ERROR, version: 3, input: "hi" });

    // Ended: a second call writes nothing.
    expect(await failUnfoldableRun(db.pool, input(runId))).toBeNull();
    expect(await readStream(db.pool, runId)).toHaveLength(3);
  });

  it("leaves a run of another tenant, or none, alone; loses to a writer that appended meanwhile", async () => {
    const runId = randomUUID();
    await appendRunEvents(db.pool, { runId, tenantId: "acme", namespace: "fur", state: initialRunState, events: [queued()] });
    expect(await failUnfoldableRun(db.pool, { ...input(runId), tenantId: "globex" })).toBeNull();
    expect(await failUnfoldableRun(db.pool, input(randomUUID()))).toBeNull();

    // Another writer's event, not committed yet when the run's last seq (2) is read: the append then waits on
    // its row and, once it commits, loses on the (stream, version) constraint.
    await db.pool.query("INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, 'acme', 2, 'garbled', '{}')", [
      randomUUID(),
      runId,
    ]);
    const held = await db.pool.connect();
    try {
      await held.query("BEGIN");
      await held.query("INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, 'acme', 3, 'garbled', '{}')", [
        randomUUID(),
        runId,
      ]);
      const attempt = failUnfoldableRun(db.pool, input(runId));
      attempt.catch(() => undefined);
      await untilAnEventInsertWaits(db.pool, "the failing append to wait on the other writer's row");
      await held.query("COMMIT");
      await expect(attempt).rejects.toBeInstanceOf(ConcurrencyError);
    } finally {
      held.release();
    }
    expect((await readStream(db.pool, runId)).map((e) => e.type)).toEqual(["run.queued", "garbled", "garbled"]);
    expect((await db.pool.query("SELECT state FROM runs WHERE id = $1", [runId])).rows[0].state).toBe("queued");
  });
});
