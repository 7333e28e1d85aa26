import { randomUUID } from "node:crypto";
import { RunErrorCode, addSeconds, foldRun, initialRunState, nowMicros } from "@steward/contract";
import { createLogger } from "@steward/platform";
import { appendRunEvents, createRunStreams, readStream } from "@steward/store";
import { useFreshDatabase } from "../../../../test/support/databases";
import { createReaper } from "./reaper";

describe("the reaper (real PostgreSQL)", () => {
  const db = useFreshDatabase("steward_reaper");
  const logger = createLogger("reaper-test", "silent");

  /** A queued run whose deadline passed `secondsAgo` ago. */
  async function overdueRun(secondsAgo: number): Promise<string> {
    const runId = randomUUID();
    const createdAt = addSeconds(nowMicros(), -secondsAgo - 60);
    await appendRunEvents(db.pool, {
      runId,
      tenantId: "reaped",
      state: initialRunState,
      namespace: "reaper",
      events: [
        {
          type: "run.queued",
          data: {
            input: "q",
            mode: "agent",
            response_language: null,
            created_by: "u",
            created_at: createdAt,
            deadline_at: addSeconds(createdAt, 60),
            thread_id: null,
          },
        },
      ],
    });
    return runId;
  }

  it("given two overdue runs, one of whose streams does not fold, when it sweeps, then the other still fails with 60402", async () => {
    const bad = await overdueRun(20);
    const good = await overdueRun(10);
    // The older deadline comes first in the sweep: a stream that cannot be folded (an event type nobody knows).
    await db.pool.query(
      `INSERT INTO events (event_id, stream_id, tenant_id, version, type, data, metadata)
       SELECT gen_random_uuid(), stream_id, tenant_id, 2, 'run.unheard_of', '{}', metadata FROM events WHERE stream_id = $1`,
      [bad],
    );

    const reaper = createReaper({ pool: db.pool, namespace: "reaper", logger, streams: createRunStreams({ pool: db.pool, namespace: "reaper" }) });
    const swept = await reaper.sweep();

    expect(swept.failed).toEqual([good]);
    const state = foldRun(await readStream(db.pool, good));
    expect(state.status).toBe("failed");
    // The loop's rule: the step the run reached is named.
    expect(state.error).toMatchObject({ code: RunErrorCode.deadlinePassed, step_no: 0 });
  });
});
