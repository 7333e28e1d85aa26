import { randomUUID } from "node:crypto";
import { addSeconds, initialRunState, nowMicros, type RunEvent } from "@steward/contract";
import { createLogger, createPool, droppedCallError, type Pool } from "@steward/platform";
import { appendRunEvents, createRunStreams, readStream } from "@steward/store";
import type { InvokeOptions, InvokeRequest, ToolExecApi, ToolSpec } from "@steward/proto";
import type { ModelAnswer, ModelProvider } from "../domain/model";
import { createRunRequestedHandler } from "./handle-run-requested";
import { goesOn } from "./fixtures/held-call";
import { recordingDelivery } from "./fixtures/recording-delivery";
import type { LeaseKeeper } from "./lease-keeper";
import { freshDatabase } from "../../../../test/support/databases";

const NAMESPACE = "handover";

const counterTool: ToolSpec = {
  name: "test_counter",
  description: "counts",
  inputSchemaJson: "{}",
  safety: "write",
  policyPoint: "test.counter",
  idempotent: true,
  abortOnDeny: false,
  requireConfirmation: false,
  exploration: false,
  states: [],
};

const toolCallAnswer: ModelAnswer = {
  text: "",
  toolCalls: [{ id: "call_1", name: "test_counter", arguments: '{"key":"k1"}' }],
  finishReason: "tool_calls",
  usage: { input_tokens: 1, output_tokens: 1 },
  provider: "scripted",
};

// When a runner must stop driving a run with a step half done: it is shutting down, or another runner has the run.
describe("a run handed over mid-drive (PostgreSQL, scripted model, fake tool-exec)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  const leases: LeaseKeeper = { hold: () => () => undefined, stop: () => undefined };
  /** The calls tool-exec was let go on with (a call sent held and dropped is not among them). */
  const sent: InvokeRequest[] = [];
  /** What the fake tool-exec does when called, before it answers. */
  let whenInvoked: (runId: string) => Promise<void> = async () => undefined;
  const toolExec = {
    invoke: async (req: InvokeRequest, options?: InvokeOptions) => {
      if (!(await goesOn(options))) throw droppedCallError();
      sent.push(req);
      await whenInvoked(req.runId);
      return {
        fingerprint: `fp-${req.callId}`,
        decision: { permit: true, code: "", reasons: [], policyIds: ["p"] },
        resultCode: "ok",
        resultJson: JSON.stringify({ result: { count: 1 }, evidence: [] }),
        replayed: false,
        nextState: "",
        decisionMs: 1,
        toolMs: 1,
      };
    },
  } as unknown as ToolExecApi;
  let modelCalls = 0;
  /** What the scripted model does when asked, before it answers with a call of test_counter. */
  let whenAsked: (runId: string) => Promise<void> = async () => undefined;
  let asking = "";
  const provider: ModelProvider = {
    name: "scripted",
    complete: async () => {
      modelCalls++;
      await whenAsked(asking);
      return toolCallAnswer;
    },
  };

  async function queuedRun(): Promise<string> {
    const runId = randomUUID();
    const createdAt = nowMicros();
    const queued: RunEvent = {
      type: "run.queued",
      data: {
        input: "count",
        mode: "agent",
        response_language: null,
        created_by: "u1",
        created_at: createdAt,
        deadline_at: addSeconds(createdAt, 180),
        thread_id: null,
      },
    };
    await appendRunEvents(pool, { runId, tenantId: "acme", namespace: NAMESPACE, state: initialRunState, events: [queued] });
    asking = runId;
    return runId;
  }

  /** The lease passes to runner-2 unseen here (it ran out before the heartbeat said so), and `type` lands at `version`. */
  async function takenOverWith(runId: string, version: number, type: string, data: unknown): Promise<void> {
    await pool.query("UPDATE runs SET lease_owner = 'runner-2' WHERE id = $1", [runId]);
    await pool.query("INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, 'acme', $3, $4, $5)", [
      randomUUID(),
      runId,
      version,
      type,
      JSON.stringify(data),
    ]);
  }

  const handlerWith = (shutdown?: AbortSignal) =>
    createRunRequestedHandler(
      {
        pool,
        toolExec,
        provider,
        tools: [counterTool],
        logger: createLogger("handover-test", "silent"),
        namespace: NAMESPACE,
        runnerId: "runner-1",
        streams: createRunStreams({ pool, namespace: NAMESPACE }),
        leases,
        shutdown,
      },
      { retryBackoffMs: 1000 },
    );

  beforeAll(async () => {
    db = await freshDatabase("steward_runner_handover");
    pool = createPool(db.url, { max: 4 });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  beforeEach(() => {
    sent.length = 0;
    modelCalls = 0;
    whenAsked = async () => undefined;
    whenInvoked = async () => undefined;
  });

  it("a stopping runner records the answer in hand, then hands the run back before calling the tool", async () => {
    const runId = await queuedRun();
    const shutdown = new AbortController();
    whenAsked = async () => shutdown.abort();
    const { d, answers } = recordingDelivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });

    await handlerWith(shutdown.signal)(d);

    expect(answers).toEqual(["nak 0"]);
    expect(modelCalls).toBe(1);
    expect(sent).toEqual([]);
    expect((await readStream(pool, runId)).map((e) => e.type)).toEqual(["run.queued", "run.started", "thought", "tool_call"]);
    const { rows } = await pool.query("SELECT state, lease_owner FROM runs WHERE id = $1", [runId]);
    expect(rows).toEqual([{ state: "running", lease_owner: null }]);
  });

  it("a runner whose run was taken over while it asked the model stops at its next append instead of racing the new holder", async () => {
    const runId = await queuedRun();
    // While the model answers, the lease runs out unseen and runner-2 claims the run and records its own answer.
    whenAsked = (id) =>
      takenOverWith(id, 3, "thought", {
        step_no: 1,
        text: "from runner-2",
        tool_calls: [],
        usage: { input_tokens: 1, output_tokens: 1 },
        provider: "scripted",
      });
    const { d, answers } = recordingDelivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });

    await handlerWith()(d);

    expect(answers).toEqual(["ack"]);
    expect(modelCalls).toBe(1);
    expect(sent).toEqual([]);
    const events = await readStream(pool, runId);
    expect(events.map((e) => [e.type, (e.data as { text?: string }).text])).toEqual([
      ["run.queued", undefined],
      ["run.started", undefined],
      ["thought", "from runner-2"],
    ]);
  });

  it("a runner whose run was taken over while its tool ran still records the tool's result, then starts nothing more", async () => {
    const runId = await queuedRun();
    // While the tool runs, the lease runs out unseen, runner-2 claims the run, and its creator asks to cancel it.
    whenInvoked = (id) => takenOverWith(id, 5, "run.cancel_requested", { requested_at: nowMicros() });
    const { d, answers } = recordingDelivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });

    await handlerWith()(d);

    expect(answers).toEqual(["ack"]);
    expect(modelCalls).toBe(1);
    expect(sent.map((r) => r.callId)).toEqual(["call_1"]);
    // The side effect's result is kept, before the run ends as its creator asked.
    expect((await readStream(pool, runId)).map((e) => e.type)).toEqual([
      "run.queued",
      "run.started",
      "thought",
      "tool_call",
      "run.cancel_requested",
      "tool.decided",
      "tool_result",
      "run.cancelled",
    ]);
  });

  it("a runner whose run was taken over while its tool ran asks the model nothing more once the new holder recorded the call", async () => {
    const runId = await queuedRun();
    // While the tool runs, the lease runs out unseen and runner-2 claims the run and records the call's result itself.
    whenInvoked = (id) =>
      takenOverWith(id, 5, "tool_result", {
        step_no: 1,
        call_id: "call_1",
        tool_name: "test_counter",
        fingerprint: "fp-call_1",
        decision: { permit: true, code: "", policy_ids: ["p"] },
        result_code: "ok",
        result: { count: 1 },
        evidence: [],
      });
    const { d, answers } = recordingDelivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });

    await handlerWith()(d);

    expect(answers).toEqual(["ack"]);
    expect(modelCalls).toBe(1);
    expect((await readStream(pool, runId)).map((e) => e.type)).toEqual(["run.queued", "run.started", "thought", "tool_call", "tool_result"]);
  });

  it("a second delivery of a run this runner has in hand is asked again later, not driven beside the first", async () => {
    const runId = await queuedRun();
    const shutdown = new AbortController();
    const handle = handlerWith(shutdown.signal);
    const first = recordingDelivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });
    const second = recordingDelivery({ run_id: runId, tenant_id: "acme", created_by: "u1" }, 2);
    // While the first delivery's loop asks the model, the same command comes again (its ack wait ran out).
    whenAsked = async () => {
      await handle(second.d);
      shutdown.abort();
    };

    await handle(first.d);

    expect(second.answers).toEqual(["nak 2000"]);
    expect(first.answers).toEqual(["nak 0"]);
    expect(modelCalls).toBe(1);
    expect((await readStream(pool, runId)).map((e) => e.type)).toEqual(["run.queued", "run.started", "thought", "tool_call"]);
  });
});
