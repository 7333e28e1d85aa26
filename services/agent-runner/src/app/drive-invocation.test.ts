import { canonicalJson } from "@steward/contract";
import { createLogger, createPool, type Pool } from "@steward/platform";
import { createRunStreams, readStream } from "@steward/store";
import type { InvokeRequest, ToolExecApi, ToolSpec } from "@steward/proto";
import type { ModelProvider } from "../domain/model";
import { createRunRequestedHandler } from "./handle-run-requested";
import { queuedInvocationRun } from "./fixtures/invocation-run";
import { recordingDelivery } from "./fixtures/recording-delivery";
import type { LeaseKeeper } from "./lease-keeper";
import { freshDatabase } from "../../../../test/support/databases";

const NAMESPACE = "inv";

const spec = (name: string, over: Partial<ToolSpec> = {}): ToolSpec => ({
  name,
  description: name,
  inputSchemaJson: "{}",
  safety: "read",
  policyPoint: "dataset.read",
  idempotent: true,
  abortOnDeny: false,
  requireConfirmation: false,
  exploration: false,
  states: [],
  ...over,
});

const delivery = (runId: string) => recordingDelivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });

// The live loop on an invocation run: the real store and handler, a tool-exec that records what it was sent, and
// a model that must never be asked.
describe("an invocation run driven by the runner (PostgreSQL, fake tool-exec, no model)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let modelCalls = 0;
  const provider: ModelProvider = {
    name: "never",
    complete: async () => {
      modelCalls++;
      throw new Error("an invocation run must not ask the model");
    },
  };
  const sent: InvokeRequest[] = [];
  const toolExec = {
    invoke: async (req: InvokeRequest) => {
      sent.push(req);
      const focus = req.toolName === "focus_dataset";
      return {
        fingerprint: `fp-${req.callId}`,
        decision: { permit: true, code: "", reasons: [], policyIds: ["member-dataset-read"] },
        resultCode: "ok",
        resultJson: JSON.stringify({ result: focus ? { dataset: "sales" } : { rows: [[42]] }, evidence: [] }),
        replayed: false,
        nextState: focus ? "dataset" : "",
        decisionMs: 1,
        toolMs: 2,
      };
    },
  } as unknown as ToolExecApi;
  const leases: LeaseKeeper = { hold: () => () => undefined, stop: () => undefined };
  let handle: ReturnType<typeof createRunRequestedHandler>;

  const invocationRun = (session: { mcp_session_id?: string; mcp_mode?: string }) =>
    queuedInvocationRun(
      pool,
      NAMESPACE,
      {
        capability_id: "tool:dataset_query",
        calls: [
          { call_id: "invoke-1", tool_name: "focus_dataset", arguments: '{"dataset":"sales"}' },
          { call_id: "invoke-2", tool_name: "dataset_query", arguments: '{"sql":"select 42"}' },
        ],
      },
      session,
    );

  beforeAll(async () => {
    db = await freshDatabase("steward_runner_invocation");
    pool = createPool(db.url, { max: 4 });
    const tools = [spec("focus_dataset"), spec("dataset_query", { states: ["dataset"] })];
    handle = createRunRequestedHandler({
      pool,
      toolExec,
      provider,
      tools,
      logger: createLogger("invocation-test", "silent"),
      namespace: NAMESPACE,
      runnerId: "runner-1",
      streams: createRunStreams({ pool, namespace: NAMESPACE }),
      leases,
    });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  beforeEach(() => {
    sent.length = 0;
  });

  it("makes the calls in order at step 0 for the run's MCP session, then succeeds with the capability's outcome", async () => {
    const runId = await invocationRun({ mcp_session_id: "7d4b0c2e-0000-4000-8000-00000000000a", mcp_mode: "observe" });
    const { d, answers } = delivery(runId);

    await handle(d);

    expect(answers).toEqual(["ack"]);
    expect(modelCalls).toBe(0);
    expect(sent.map((r) => [r.callId, r.toolName, r.stepNo, r.mcpSessionId, r.mcpMode])).toEqual([
      ["invoke-1", "focus_dataset", 0, "7d4b0c2e-0000-4000-8000-00000000000a", "observe"],
      ["invoke-2", "dataset_query", 0, "7d4b0c2e-0000-4000-8000-00000000000a", "observe"],
    ]);
    const events = await readStream(pool, runId);
    expect(events.map((e) => e.type)).toEqual([
      "run.queued",
      "run.started",
      "tool_call",
      "tool.decided",
      "tool_result",
      "tool_call",
      "tool.decided",
      "tool_result",
      "run.succeeded",
    ]);
    expect(events[8].data).toMatchObject({
      output: { text: canonicalJson({ capability_id: "tool:dataset_query", result_code: "ok", result: { rows: [[42]] } }), evidence: [] },
    });
    const { rows } = await pool.query("SELECT state FROM runs WHERE id = $1", [runId]);
    expect(rows[0].state).toBe("succeeded");
  });

  it("sends no session outside MCP (empty, which tool-exec leaves out of the PDP's context)", async () => {
    const runId = await invocationRun({});
    await handle(delivery(runId).d);
    expect(sent.map((r) => [r.mcpSessionId, r.mcpMode])).toEqual([
      ["", ""],
      ["", ""],
    ]);
    expect(modelCalls).toBe(0);
  });
});
