import { randomUUID } from "node:crypto";
import { addSeconds, initialRunState, nowMicros, type RunEvent } from "@steward/contract";
import { useFreshDatabase } from "../../../../test/support/databases";
import { statementLog } from "../../../../test/support/statement-log";
import { admitDeferred } from "./admission";
import { appendRunEvents } from "./append-run-events";
import { endDrive } from "./end-drive";
import { claimRun } from "./lease";

describe("a drive's end: the lease let go and the tenant's deferred runs probed, in one statement at most (real PostgreSQL)", () => {
  const db = useFreshDatabase("steward_end_drive");

  /** A run of the tenant queued through its events and claimed by `owner`: its state at version 1. */
  async function claimed(tenant: string, owner: string) {
    const runId = randomUUID();
    const createdAt = nowMicros();
    const queued: RunEvent = {
      type: "run.queued",
      data: {
        input: "q",
        mode: "agent",
        response_language: null,
        created_by: "u",
        created_at: createdAt,
        deadline_at: addSeconds(createdAt, 180),
        thread_id: null,
      },
    };
    const { state } = await appendRunEvents(db.pool, { runId, tenantId: tenant, namespace: "ns", state: initialRunState, events: [queued] });
    expect(await claimRun(db.pool, runId, owner, 60_000)).toMatchObject({ kind: "claimed" });
    return { runId, state };
  }

  const leaseOf = async (runId: string) =>
    (
      await db.pool.query<{ owner: string | null; until: boolean }>("SELECT lease_owner AS owner, lease_until IS NOT NULL AS until FROM runs WHERE id = $1", [
        runId,
      ])
    ).rows[0];

  /** Marks a queued run of the tenant deferred, as an admission that found no place would. */
  async function deferredRun(tenant: string): Promise<string> {
    const { runId } = await claimed(tenant, "nobody");
    await db.pool.query("UPDATE runs SET deferred_at = clock_timestamp(), lease_owner = NULL, lease_until = NULL WHERE id = $1", [runId]);
    return runId;
  }

  it("given a drive that did not end, then the lease is let go and the deferred runs probed in one statement; another runner's lease stays", async () => {
    const { runId } = await claimed("t-open", "runner-a");
    const { pool: p, sent } = statementLog(db.pool);
    expect(await endDrive(p, { runId, owner: "runner-a", ended: false, tenantId: "t-open" })).toEqual({ deferredWaiting: false });
    expect(sent).toHaveLength(1);
    expect(await leaseOf(runId)).toEqual({ owner: null, until: false });

    const waiting = await deferredRun("t-open");
    const { runId: other } = await claimed("t-open", "runner-b");
    expect(await endDrive(p, { runId: other, owner: "runner-a", ended: false, tenantId: "t-open" })).toEqual({ deferredWaiting: true });
    expect(sent).toHaveLength(2);
    expect((await leaseOf(other)).owner).toBe("runner-b");
    // The probe's answer spares admitDeferred its own.
    const admitting = statementLog(db.pool);
    expect(await admitDeferred(admitting.pool, "ns", "t-open", 5, { probed: true })).toEqual([waiting]);
    expect(admitting.sent).toEqual([]); // the admission's own transaction runs on a client of its own
  });

  it("given a drive without admission that did not end, then only the lease is let go", async () => {
    const { runId } = await claimed("t-plain", "runner-a");
    await deferredRun("t-plain");
    const { pool: p, sent } = statementLog(db.pool);
    expect(await endDrive(p, { runId, owner: "runner-a", ended: false })).toEqual({ deferredWaiting: false });
    expect(sent).toHaveLength(1);
    expect(await leaseOf(runId)).toEqual({ owner: null, until: false });
  });

  it("given a run that ended in the drive, then its lease was let go by the append that ended it, and only the deferred runs are probed", async () => {
    const { runId, state } = await claimed("t-ended", "runner-a");
    expect((await leaseOf(runId)).owner).toBe("runner-a");
    const ending: RunEvent = { type: "run.succeeded", data: { output: { text: "done", evidence: [] }, finished_at: nowMicros() } } as RunEvent;
    await appendRunEvents(db.pool, { runId, tenantId: "t-ended", namespace: "ns", state, events: [ending] });
    expect(await leaseOf(runId)).toEqual({ owner: null, until: false });

    const { pool: p, sent } = statementLog(db.pool);
    expect(await endDrive(p, { runId, owner: "runner-a", ended: true })).toEqual({ deferredWaiting: false });
    expect(sent).toHaveLength(0);
    await deferredRun("t-ended");
    expect(await endDrive(p, { runId, owner: "runner-a", ended: true, tenantId: "t-ended" })).toEqual({ deferredWaiting: true });
    expect(sent).toHaveLength(1);
  });
});
