import { bindGrpc, createLogger, grpc, shutdownGrpc } from "@steward/platform";
import { createToolExecApi, type InvokeRequest, type ToolExecApi } from "@steward/proto";
import { createDeferredToolExecServer } from "./server";
import { createToolRegistry } from "../../domain/registry";
import { knowledgeSearchTool } from "../tools/knowledge-search";
import type { InvokeHandler } from "../../app/invoke-tool";

// tool-exec binds its port before PostgreSQL answers: until its tools are attached, a call on the call stream
// and a unary call are both answered UNAVAILABLE (the runner's "try again"), and afterwards both are served.
// The invoke handler is the test's: what is under test is the gRPC face, not the tool or the PDP.

const request: InvokeRequest = {
  runId: "00000000-0000-4000-8000-000000000001",
  tenantId: "acme",
  userId: "alice",
  stepNo: 1,
  callId: "c1",
  toolName: "knowledge_search",
  argumentsJson: "{}",
  elevationSessionId: "",
};

describe("tool-exec's gRPC server bound before its tools are ready", () => {
  const logger = createLogger("tool-exec", "silent");
  let deferred: ReturnType<typeof createDeferredToolExecServer>;
  let api: ToolExecApi;

  beforeAll(async () => {
    deferred = createDeferredToolExecServer(logger);
    const port = await bindGrpc(deferred.server, "127.0.0.1:0");
    api = createToolExecApi(`127.0.0.1:${port}`);
  });

  afterAll(async () => {
    api.close();
    await shutdownGrpc(deferred.server, 2000);
  });

  it("given no tools attached yet, then a call on the stream and a unary call answer UNAVAILABLE; once attached, both are served", async () => {
    await expect(api.invoke(request, { deadlineMs: 5000 })).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, details: "tool-exec is starting" });
    await expect(api.invoke(request, { deadlineMs: 5000, waitForReady: true })).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    await expect(api.listTools({ deadlineMs: 5000 })).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });

    const invoke: InvokeHandler = async (cmd) => ({
      fingerprint: `fp-${cmd.callId}`,
      decision: { permit: true, code: "", reasons: [], policyIds: [] },
      resultCode: "ok",
      result: { result: { seen: cmd.toolName }, evidence: [] },
      replayed: false,
      decisionMs: 0,
      toolMs: 0,
    });
    deferred.attach({ registry: createToolRegistry([knowledgeSearchTool(null as never)]), invoke, logger });

    const streamed = await api.invoke(request, { deadlineMs: 5000 });
    expect(streamed).toMatchObject({ fingerprint: "fp-c1", resultCode: "ok" });
    expect(JSON.parse(streamed.resultJson)).toEqual({ result: { seen: "knowledge_search" }, evidence: [] });
    await expect(api.invoke(request, { deadlineMs: 5000, waitForReady: true })).resolves.toMatchObject({ fingerprint: "fp-c1" });
    expect((await api.listTools({ deadlineMs: 5000 })).tools.map((t) => t.name)).toEqual(["knowledge_search"]);
  });

  it("given a request without its run, then the stream answers INVALID_ARGUMENT for that call only", async () => {
    await expect(api.invoke({ ...request, runId: "" }, { deadlineMs: 5000 })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(api.invoke(request, { deadlineMs: 5000 })).resolves.toMatchObject({ resultCode: "ok" });
  });
});
