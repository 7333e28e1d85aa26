import { randomUUID } from "node:crypto";
import { addSeconds, busNames, initialRunState, nowMicros, type RunEvent } from "@steward/contract";
import { createLogger, createPool, type Pool } from "@steward/platform";
import { appendRunEvents, createRunStreams, readStream } from "@steward/store";
import type { ToolExecApi } from "@steward/proto";
import { ModelUnavailableError, type ModelAnswer, type ModelProvider } from "../domain/model";
import { createRunRequestedHandler } from "./handle-run-requested";
import { recordingDelivery } from "./fixtures/recording-delivery";
import type { LeaseKeeper } from "./lease-keeper";
import { freshDatabase } from "../../../../test/support/databases";
import { statementLog } from "../../../../test/support/statement-log";

const NAMESPACE = "hrr";

const delivery = recordingDelivery;

function queued(): RunEvent {
  const createdAt = nowMicros();
  return {
    type: "run.queued",
    data: {
      input: "hello there",
      mode: "ask",
      response_language: "fr",
      created_by: "u1",
      created_at: createdAt,
      deadline_at: addSeconds(createdAt, 180),
      thread_id: null,
    },
  };
}

describe("a run.requested delivery (PostgreSQL, fake model and tool-exec)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let modelCalls = 0;
  const provider: ModelProvider = {
    name: "broken",
    complete: async () => {
      modelCalls++;
      throw new Error("an ordinary failure of the drive");
    },
  };
  const toolExec = new Proxy({}, { get: () => () => Promise.reject(new Error("tool-exec is not part of this test")) }) as unknown as ToolExecApi;
  const leases: LeaseKeeper = { hold: () => () => undefined, stop: () => undefined };

  let handle: ReturnType<typeof createRunRequestedHandler>;

  /** A run stored as the gateway stores it (run.queued, its projection), then `more` written raw after it. */
  async function runWith(more: Array<{ type: string; data: unknown }>): Promise<string> {
    const runId = randomUUID();
    await appendRunEvents(pool, { runId, tenantId: "acme", namespace: NAMESPACE, state: initialRunState, events: [queued()] });
    for (const [i, e] of more.entries()) {
      await pool.query("INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, 'acme', $3, $4, $5)", [
        randomUUID(),
        runId,
        2 + i,
        e.type,
        JSON.stringify(e.data),
      ]);
    }
    return runId;
  }

  const projection = async (runId: string) =>
    (await pool.query("SELECT state, error, input, mode, response_language, created_by, version, finished_at, lease_owner FROM runs WHERE id = $1", [runId]))
      .rows[0];

  beforeAll(async () => {
    db = await freshDatabase("steward_runner_delivery");
    pool = createPool(db.url, { max: 4 });
    handle = createRunRequestedHandler(
      {
        pool,
        toolExec,
        provider,
        tools: [],
        logger: createLogger("delivery-test", "silent"),
        namespace: NAMESPACE,
        runnerId: "runner-1",
        leases,
        streams: createRunStreams({ pool, namespace: NAMESPACE }),
      },
      { retryBackoffMs: 1000 },
    );
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  it.each([
    ["an event of a type the fold does not know", [{ type: "run.teleported", data: {} }]],
    [
      "an event missing what the fold needs",
      [
        { type: "run.started", data: { runner_id: "r0", started_at: nowMicros() } },
        { type: "context.compacted", data: { step_no: 1 } },
      ],
    ],
  ])("a stream the fold cannot read (%s) fails the run with 60302 on its first delivery, visible to the client", async (_label, more) => {
    const runId = await runWith(more);
    const { d, answers } = delivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });

    await handle(d);

    // Answered for good: not retried until the deliveries run out.
    expect(answers).toEqual(["ack"]);
    const lastSeq = 1 + more.length;
    const events = await readStream(pool, runId);
    expect(events.map((e) => e.type)).toEqual(["run.queued", ...more.map((e) => e.type), "run.failed"]);
    expect(events.map((e) => e.metadata.seq)).toEqual(Array.from({ length: lastSeq + 1 }, (_, i) => i + 1));
    expect(events[lastSeq].data).toMatchObject({ error: { code: 60302, message: "the run's recorded events cannot be read" } });
    // The snapshot shows the failure and keeps what it showed of the run; the lease is given up.
    expect(await projection(runId)).toMatchObject({
      state: "failed",
      error: { code: 60302, message: "the run's recorded events cannot be read" },
      input: "hello there",
      mode: "ask",
      response_language: "fr",
      created_by: "u1",
      version: lastSeq + 1,
      finished_at: expect.stringMatching(/Z$/),
      lease_owner: null,
    });
    // It is the relays' to publish (no writer holds it), so live clients see run.failed too.
    const { rows } = await pool.query("SELECT events_subject, published_version, publish_held_until FROM runs WHERE id = $1", [runId]);
    expect(rows).toEqual([{ events_subject: busNames(NAMESPACE).runEvent(runId, ""), published_version: 0, publish_held_until: null }]);
    expect(modelCalls).toBe(0);

    // A later delivery of the same command finds the run finished and changes nothing.
    const again = delivery({ run_id: runId, tenant_id: "acme", created_by: "u1" }, 2);
    await handle(again.d);
    expect(again.answers).toEqual(["ack"]);
    expect(await readStream(pool, runId)).toHaveLength(lastSeq + 1);
  });

  it("a run whose events fold but whose drive fails is retried with backoff, not failed", async () => {
    const runId = await runWith([]);
    const { d, answers } = delivery({ run_id: runId, tenant_id: "acme", created_by: "u1" }, 2);

    await handle(d);

    expect(modelCalls).toBeGreaterThan(0);
    expect(answers).toEqual(["nak 2000"]);
    const run = await projection(runId);
    expect(run.state).not.toBe("failed");
    // The drive did not end the run: its lease is let go, so the next delivery may take it at once.
    expect(run.lease_owner).toBeNull();
    expect((await readStream(pool, runId)).map((e) => e.type)).not.toContain("run.failed");
  });

  it("a retry's nak is given once the run is out of hand and its lease let go: a redelivery at once is driven, not bounced", async () => {
    const runId = await runWith([]);
    const callsBefore = modelCalls;
    const second = delivery({ run_id: runId, tenant_id: "acme", created_by: "u1" }, 2);
    let redelivered: Promise<void> | undefined;
    const first = delivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });
    // JetStream may redeliver as soon as the nak arrives (a short backoff): the second delivery starts then.
    const nak = first.d.nak;
    const d = { ...first.d, nak: (ms: number) => (nak(ms), (redelivered = handle(second.d))) };

    await handle(d);
    await redelivered;

    expect(first.answers).toEqual(["nak 1000"]);
    expect(second.answers).toEqual(["nak 2000"]);
    // Each delivery reached the model: none was spent on the run still being in hand, or on its own lease.
    expect(modelCalls - callsBefore).toBe(2);
  });

  it("a drive that hands its run back lets its lease go; one that ends the run sends no release, its ending append let the lease go", async () => {
    let answer: ModelAnswer | null = null;
    const switching: ModelProvider = {
      name: "switching",
      complete: async () => {
        if (!answer) throw new ModelUnavailableError("switching", { retryAfterMs: 1000 });
        return answer;
      },
    };
    const { pool: naming, sent, named } = statementLog(pool);
    const handler = createRunRequestedHandler(
      {
        pool: naming,
        toolExec,
        provider: switching,
        tools: [],
        logger: createLogger("delivery-test", "silent"),
        namespace: NAMESPACE,
        runnerId: "runner-1",
        streams: createRunStreams({ pool: naming, namespace: NAMESPACE }),
        leases,
      },
      { retryBackoffMs: 1000 },
    );

    const runId = await runWith([]);
    const first = delivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });
    await handler(first.d);
    expect(first.answers).toEqual(["nak 1000"]);
    expect(await projection(runId)).toMatchObject({ state: "running", lease_owner: null });
    expect(named("steward.release_lease")).toBe(1);

    answer = { text: "done", toolCalls: [], finishReason: "stop", usage: { input_tokens: 1, output_tokens: 1 }, provider: "switching" };
    const sentBefore = sent.length;
    const second = delivery({ run_id: runId, tenant_id: "acme", created_by: "u1" }, 2);
    await handler(second.d);
    expect(second.answers).toEqual(["ack"]);
    expect(await projection(runId)).toMatchObject({ state: "succeeded", lease_owner: null });
    expect(sent.slice(sentBefore).filter((n) => n.includes("append"))).not.toEqual([]);
    expect(named("steward.release_lease")).toBe(1); // the first drive's, none since
  });
});
