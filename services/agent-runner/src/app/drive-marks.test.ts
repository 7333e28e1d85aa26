import { randomUUID } from "node:crypto";
import { addSeconds, initialRunState, nowMicros, type RunEvent } from "@steward/contract";
import { createLogger } from "@steward/platform";
import { appendRunEvents, createDirectPublisher, createRunStreams, type DirectPublisher } from "@steward/store";
import type { ToolExecApi } from "@steward/proto";
import type { ModelAnswer, ModelProvider } from "../domain/model";
import { driveRun } from "./drive-run";
import { readTool } from "./fixtures/read-tool";
import { useStoreAndBus } from "../../../../test/support/store-bus";
import { runBusProbes } from "../../../../test/support/run-bus";
import { statementLog } from "../../../../test/support/statement-log";
import { waitFor } from "../../../../test/support/wait-for";

jest.setTimeout(60_000);

const logger = createLogger("drive-marks-test", "silent");

const lookup = readTool("lookup", "knowledge.document.read", { q: { type: "string" } });

const usage = { input_tokens: 10, output_tokens: 5 };
const call = (n: number): ModelAnswer => ({
  text: "",
  toolCalls: [{ id: `c${n}`, name: "lookup", arguments: JSON.stringify({ q: `q${n}` }) }],
  finishReason: "tool_calls",
  usage,
  provider: "scripted",
});
const done: ModelAnswer = { text: "found it", toolCalls: [], finishReason: "stop", usage, provider: "scripted" };

// The loop publishes its events' copies itself and marks them on the bus with its next append (docs/architecture.md,
// "Outbox relay"): a driven run's marks cost no statement of their own.
describe("a driven run's copies marked by its own appends (PostgreSQL, JetStream, fake model and tool-exec)", () => {
  const fx = useStoreAndBus("runner_marks", { namespacePrefix: "dm" });
  const { namespace } = fx;
  const { seqsOnBus, runOf } = runBusProbes(fx);

  it("given the loop publishing its copies, then each append marks what was acknowledged before it, and only the run's last copies wait for a mark", async () => {
    const runId = randomUUID();
    const createdAt = nowMicros();
    const queued: RunEvent = {
      type: "run.queued",
      data: {
        input: "find it",
        mode: "agent",
        response_language: null,
        created_by: "u1",
        created_at: createdAt,
        deadline_at: addSeconds(createdAt, 180),
        thread_id: null,
      },
    };
    // As the gateway creates a run: its copy published and marked.
    const created = await appendRunEvents(fx.pool, { runId, tenantId: "acme", namespace, state: initialRunState, events: [queued], publishDirect: true });
    const gateway = createDirectPublisher({ pool: fx.pool, nc: fx.nc, logger });
    gateway.publish(runId, created.direct, { last: true });
    await gateway.stop();
    expect(await runOf(runId)).toMatchObject({ version: 1, published_version: 1 });

    const { pool, named } = statementLog(fx.pool);
    // No mark on a timer: what the appends do not take along is marked when the publisher stops.
    const publisher: DirectPublisher = createDirectPublisher({ pool, nc: fx.nc, logger }, { markEveryMs: 600_000, carryForMs: 600_000 });
    const script = [call(1), call(2), call(3), done];
    const provider: ModelProvider = { name: "scripted", complete: async () => script.shift()! };
    /** Per tool call, the run's copies acknowledged when the call came: what the result's append takes along. */
    const ackedAtCall: number[] = [];
    const toolExec = {
      invoke: async (req: { argumentsJson: string }) => {
        // The call's own copy is acknowledged before the tool answers, so the result's append has it to take along.
        const version = (await runOf(runId)).version;
        ackedAtCall.push(
          await waitFor(() => ((publisher.carry(runId) ?? 0) >= version ? publisher.carry(runId)! : undefined), {
            timeoutMs: 10_000,
            what: "the call's copy acknowledged",
          }),
        );
        return {
          fingerprint: `fp-${req.argumentsJson}`,
          decision: { permit: true, code: "", policyIds: ["p1"] },
          resultCode: "ok",
          resultJson: JSON.stringify({ result: { found: true }, evidence: [] }),
          replayed: false,
          nextState: "",
        };
      },
    } as unknown as ToolExecApi;

    const outcome = await driveRun(
      { pool, toolExec, provider, tools: [lookup], logger, namespace, runnerId: "runner-1", streams: createRunStreams({ pool, namespace, publisher }) },
      { runId, tenantId: "acme", userId: "u1", lastDelivery: true, firstDelivery: true, signal: new AbortController().signal },
    );
    expect(outcome).toEqual({ kind: "finished" });

    // run.started, then per step the answer with its call and the result, then the end.
    expect(named("steward.append_run_events")).toBeGreaterThanOrEqual(8);
    expect(named("steward.mark_published")).toBe(0);
    // Each result's append marked the run through its call at least; the last append's copies are not marked yet.
    expect(ackedAtCall).toHaveLength(3);
    const during = await runOf(runId);
    expect(during.published_version).toBeGreaterThanOrEqual(ackedAtCall[2]);
    expect(during.published_version).toBeLessThan(during.version);

    await publisher.stop();
    expect(named("steward.mark_published")).toBe(1);
    const after = await runOf(runId);
    expect(after.published_version).toBe(after.version);
    expect(await seqsOnBus(runId)).toEqual(Array.from({ length: after.version }, (_, i) => i + 1));
  });
});
