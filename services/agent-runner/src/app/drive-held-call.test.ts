import { nowMicros, type RunEvent } from "@steward/contract";
import { createLogger, createPool, droppedCallError, type Pool } from "@steward/platform";
import { appendRunEvents, createRunStreams, readStream, type RunAppender } from "@steward/store";
import type { InvokeOptions, InvokeRequest, ToolExecApi, ToolSpec } from "@steward/proto";
import type { ModelProvider } from "../domain/model";
import { createRunRequestedHandler } from "./handle-run-requested";
import { goesOn } from "./fixtures/held-call";
import { queuedInvocationRun } from "./fixtures/invocation-run";
import { recordingDelivery } from "./fixtures/recording-delivery";
import type { LeaseKeeper } from "./lease-keeper";
import { freshDatabase } from "../../../../test/support/databases";

const NAMESPACE = "held";

const counter: ToolSpec = {
  name: "counter",
  description: "counts",
  inputSchemaJson: "{}",
  safety: "write",
  policyPoint: "dataset.read",
  idempotent: true,
  abortOnDeny: false,
  requireConfirmation: false,
  exploration: false,
  states: [],
};

// A tool call goes out with the commit that records it (docs/architecture.md, "A tool call sent with its
// commit"): the live loop on an invocation run (one call, no model) with the real store, and a tool-exec that
// writes down, in order with the loop's commits, when a call was sent and what its caller said about it.
describe("a tool call sent held with the commit that records it (PostgreSQL, fake tool-exec)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  const log: string[] = [];
  const provider: ModelProvider = {
    name: "never",
    complete: async () => {
      throw new Error("an invocation run must not ask the model");
    },
  };
  const toolExec = {
    invoke: async (req: InvokeRequest, options: InvokeOptions = {}) => {
      log.push(options.go ? `${req.callId} sent held` : `${req.callId} sent`);
      const go = await goesOn(options);
      if (options.go) log.push(`${req.callId} ${go ? "let go on" : "dropped"}`);
      if (!go) throw droppedCallError();
      return {
        fingerprint: `fp-${req.callId}`,
        decision: { permit: true, code: "", reasons: [], policyIds: ["p"] },
        resultCode: "ok",
        resultJson: JSON.stringify({ result: { n: 1 }, evidence: [] }),
        replayed: false,
        nextState: "",
        decisionMs: 1,
        toolMs: 1,
      };
    },
  } as unknown as ToolExecApi;
  const leases: LeaseKeeper = { hold: () => () => undefined, stop: () => undefined };
  const observer = {
    committed: (events: readonly RunEvent[]) => void log.push(`committed ${events.map((e) => e.type).join(", ")}`),
    stepEnded: () => undefined,
  };

  const invocationRun = () =>
    queuedInvocationRun(pool, NAMESPACE, { capability_id: "tool:counter", calls: [{ call_id: "invoke-1", tool_name: "counter", arguments: "{}" }] });

  const handler = (appender?: RunAppender) =>
    createRunRequestedHandler({
      pool,
      toolExec,
      provider,
      tools: [counter],
      logger: createLogger("held-test", "silent"),
      namespace: NAMESPACE,
      runnerId: "runner-1",
      leases,
      observer,
      streams: createRunStreams({ pool, namespace: NAMESPACE, appender }),
    });

  beforeAll(async () => {
    db = await freshDatabase("steward_runner_held_call");
    pool = createPool(db.url, { max: 4 });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  beforeEach(() => {
    log.length = 0;
  });

  it("given a run about to call a tool, then the call is sent before the tool_call's commit and let go on only after it", async () => {
    const runId = await invocationRun();
    const { d, answers } = recordingDelivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });

    await handler()(d);

    expect(answers).toEqual(["ack"]);
    expect(log).toEqual(["invoke-1 sent held", "committed run.started, tool_call", "invoke-1 let go on", "committed tool.decided, tool_result, run.succeeded"]);
  });

  it("given a run about to call a tool, when another writer appends before the tool_call's commit, then the call is dropped and nothing of it is recorded", async () => {
    const runId = await invocationRun();
    const { d, answers } = recordingDelivery({ run_id: runId, tenant_id: "acme", created_by: "u1" });
    // The creator's cancel lands between the loop's decision and its commit: the commit fails on the version.
    let raced = false;
    const appender: RunAppender = {
      async append(input) {
        if (!raced && input.events.some((e) => e.type === "tool_call")) {
          raced = true;
          const cancel: RunEvent = { type: "run.cancel_requested", data: { requested_at: nowMicros() } };
          await appendRunEvents(pool, { runId, tenantId: "acme", namespace: NAMESPACE, state: input.state, events: [cancel] });
        }
        return appendRunEvents(pool, input);
      },
    };

    await handler(appender)(d);

    expect(answers).toEqual(["ack"]);
    expect(log).toEqual(["invoke-1 sent held", "invoke-1 dropped", "committed run.cancelled"]);
    expect((await readStream(pool, runId)).map((e) => e.type)).toEqual(["run.queued", "run.cancel_requested", "run.cancelled"]);
  });
});
