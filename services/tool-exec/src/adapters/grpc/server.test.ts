import { randomUUID } from "node:crypto";
import { toolFingerprint } from "@steward/contract";
import { bindGrpc, createLogger, createPool, grpc, shutdownGrpc, type Pool } from "@steward/platform";
import { createPolicyDecisionApi, createToolExecApi, type PolicyDecisionApi, type ToolExecApi } from "@steward/proto";
import { addDocument } from "@steward/store";
import { createToolExecGrpcServer } from "./server";
import { createInvokeHandler } from "../../app/invoke-tool";
import { createToolRegistry, ToolRegistryError } from "../../domain/registry";
import { knowledgeSearchTool } from "../tools/knowledge-search";
import { createPgIdempotencyStore } from "../pg/idempotency-store";
import { freshDatabase, freshNamespace, natsUrl } from "../../../../../test/support/databases";
import { waitFor } from "../../../../../test/support/wait-for";

// The policy service runs as its own process (built), on a port it picks: no service imports another's code.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const launcher = require("../../../../../infra/local/launcher.cjs") as {
  startService(service: string, env: Record<string, string>): Promise<{ ready: { addr: string }; stop(): Promise<void> }>;
};

describe("createToolRegistry", () => {
  // The tools never run here, so no pool is needed.
  const tool = knowledgeSearchTool(null as never);

  it("accepts the knowledge tool and lists it", () => {
    const registry = createToolRegistry([tool]);
    expect(registry.get("knowledge_search")).toBe(tool);
    expect(registry.list().map((t) => t.name)).toEqual(["knowledge_search"]);
    expect(registry.get("nope")).toBeUndefined();
  });

  it("refuses a tool whose policy point is not in the catalogue", () => {
    const undeclared = { ...tool, policyPoint: "not.declared" as any };
    expect(() => createToolRegistry([undeclared])).toThrow(ToolRegistryError);
    expect(() => createToolRegistry([undeclared])).toThrow(/not\.declared/);
  });

  it("refuses a tool registered twice and an invalid name", () => {
    expect(() => createToolRegistry([tool, { ...tool }])).toThrow(ToolRegistryError);
    expect(() => createToolRegistry([{ ...tool, name: "Bad-Name" }])).toThrow(ToolRegistryError);
  });
});

describe("tool-exec gRPC server with the policy server behind it", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let policy: { ready: { addr: string }; stop(): Promise<void> } | null = null;
  let toolServer: grpc.Server;
  let pdp: PolicyDecisionApi;
  let api: ToolExecApi;
  let docId: string;
  let toolRuns = 0;

  const logger = createLogger("tool-exec", "silent");

  const invoke = (over: { runId?: string; userId?: string; toolName?: string; argumentsJson?: string } = {}) =>
    api.invoke(
      {
        runId: over.runId ?? randomUUID(),
        tenantId: "acme",
        userId: over.userId ?? "alice",
        stepNo: 1,
        callId: "call-1",
        toolName: over.toolName ?? "knowledge_search",
        argumentsJson: over.argumentsJson ?? JSON.stringify({ query: "  How long for a REFUND? " }),
        elevationSessionId: "",
      },
      { deadlineMs: 10_000 },
    );

  const storedResults = async (runId: string): Promise<number> =>
    (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tool_results WHERE run_id = $1", [runId])).rows[0].n;

  beforeAll(async () => {
    db = await freshDatabase("steward_tool_exec_grpc");
    pool = createPool(db.url, { max: 6 });
    docId = await addDocument(pool, {
      tenantId: "acme",
      title: "Refund policy",
      body: "Customers may ask for a refund within 30 days of purchase.\n\nRefunds go back to the original card.",
    });
    await addDocument(pool, { tenantId: "acme", title: "Office hours", body: "The office is open from 9 to 17 on weekdays." });
    await addDocument(pool, { tenantId: "globex", title: "Globex refunds", body: "Refund requests are handled within 90 days." });
    await pool.query("INSERT INTO memberships (tenant_id, user_id, roles) VALUES ('acme', 'alice', ARRAY['member'])");

    policy = await launcher.startService("policy", {
      STEWARD_ENV: "test",
      DATABASE_URL: db.url,
      NATS_URL: natsUrl,
      STEWARD_NATS_NAMESPACE: freshNamespace("tx"),
      POLICY_ADDR: "127.0.0.1:0",
      LOG_LEVEL: "info",
    });

    // The real knowledge tool, counted, so that a test can tell whether it ran.
    const knowledge = knowledgeSearchTool(pool);
    const counted = {
      ...knowledge,
      run: (...args: Parameters<typeof knowledge.run>) => {
        toolRuns++;
        return knowledge.run(...args);
      },
    };
    const registry = createToolRegistry([counted]);
    pdp = createPolicyDecisionApi(policy.ready.addr);
    const handler = createInvokeHandler({ registry, pdp, results: createPgIdempotencyStore(pool), logger });
    toolServer = createToolExecGrpcServer({ registry, invoke: handler, logger });
    const toolPort = await bindGrpc(toolServer, "127.0.0.1:0");
    api = createToolExecApi(`127.0.0.1:${toolPort}`);
  });

  afterAll(async () => {
    api?.close();
    pdp?.close();
    if (toolServer) await shutdownGrpc(toolServer, 2000);
    await policy?.stop();
    await pool?.end();
    if (db) await db.drop();
  });

  it("lists knowledge_search with its policy point and input schema", async () => {
    const { tools } = await api.listTools({ deadlineMs: 5000 });
    expect(tools.map((t) => t.name)).toEqual(["knowledge_search"]);
    const [spec] = tools;
    expect(spec).toMatchObject({
      name: "knowledge_search",
      policyPoint: "knowledge.document.read",
      safety: "read",
      idempotent: true,
      abortOnDeny: false,
      requireConfirmation: false,
      exploration: false,
    });
    expect(spec.description.length).toBeGreaterThan(0);
    const schema = JSON.parse(spec.inputSchemaJson);
    expect(schema.type).toBe("object");
    expect(schema.required).toEqual(["query"]);
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(["query", "limit"]));
  });

  it("permits a member, runs the tool and returns evidence naming the seeded document; a repeat is replayed", async () => {
    const runId = randomUUID();
    const runsBefore = toolRuns;
    const first = await invoke({ runId });

    expect(first.decision?.permit).toBe(true);
    expect(first.decision?.code).toBe("");
    expect(first.decision?.policyIds).toEqual(["member-knowledge-read"]);
    expect(first.resultCode).toBe("ok");
    expect(first.replayed).toBe(false);
    expect(first.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    // The fingerprint is over the normalised input: trimmed, case-folded, default limit filled in.
    expect(first.fingerprint).toBe(toolFingerprint("knowledge_search", { query: "how long for a refund?", limit: 5 }));
    expect(toolRuns).toBe(runsBefore + 1);

    const result = JSON.parse(first.resultJson);
    expect(result.evidence.length).toBeGreaterThan(0);
    expect(result.evidence[0]).toMatchObject({ document_id: docId, title: "Refund policy" });
    expect(result.evidence[0].snippet).toContain("refund");
    // Another tenant's documents never show up.
    expect(result.evidence.map((e: { title: string }) => e.title)).not.toContain("Globex refunds");
    expect(result.result.matches).toBe(result.evidence.length);
    // The read's record is kept beside its answer, not before it.
    await waitFor(async () => ((await storedResults(runId)) === 1 ? true : undefined), { timeoutMs: 5000, what: "the read's record" });

    // Same call, differently spelt but equal once normalised: served from the idempotency record.
    const again = await invoke({ runId, argumentsJson: JSON.stringify({ query: "how long for a refund?", limit: 5 }) });
    expect(again.replayed).toBe(true);
    expect(again.decision?.permit).toBe(true);
    expect(again.resultCode).toBe("ok");
    expect(again.fingerprint).toBe(first.fingerprint);
    expect(JSON.parse(again.resultJson)).toEqual(result);
    expect(toolRuns).toBe(runsBefore + 1);
    expect(await storedResults(runId)).toBe(1);

    // Another run does not share the record.
    const otherRun = await invoke({});
    expect(otherRun.replayed).toBe(false);
    expect(toolRuns).toBe(runsBefore + 2);
  });

  it("denies a user without a membership with 60500, and the tool does not run", async () => {
    const runId = randomUUID();
    const runsBefore = toolRuns;
    const denied = await invoke({ runId, userId: "mallory" });

    expect(denied.decision?.permit).toBe(false);
    expect(denied.decision?.code).toBe("60500");
    expect(denied.resultCode).toBe("60500");
    expect(denied.replayed).toBe(false);
    expect(denied.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const body = JSON.parse(denied.resultJson);
    expect(body.evidence).toEqual([]);
    expect(body.result.error_code).toBe("60500");
    expect(toolRuns).toBe(runsBefore);
    expect(await storedResults(runId)).toBe(0);
  });

  it("answers NOT_FOUND for an unknown tool", async () => {
    await expect(invoke({ toolName: "launch_missiles" })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it("answers INVALID_ARGUMENT for arguments that are not JSON or do not match the schema", async () => {
    const runsBefore = toolRuns;
    await expect(invoke({ argumentsJson: "{not json" })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(invoke({ argumentsJson: JSON.stringify({ query: "" }) })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
    await expect(invoke({ argumentsJson: JSON.stringify({ query: "refund", extra: 1 }) })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
    expect(toolRuns).toBe(runsBefore);
  });

  it("answers INVALID_ARGUMENT when the run, tenant, user or tool is missing", async () => {
    await expect(
      api.invoke(
        { runId: "", tenantId: "acme", userId: "alice", stepNo: 1, callId: "c", toolName: "knowledge_search", argumentsJson: "{}", elevationSessionId: "" },
        { deadlineMs: 5000 },
      ),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });

  // Last: it takes the policy server down.
  it("fails closed with 60502 when the policy server is unreachable, and nothing runs", async () => {
    // Up, the same call is permitted...
    const probe = await invoke({});
    expect(probe.decision?.permit).toBe(true);

    await policy?.stop();
    policy = null;

    const runId = randomUUID();
    const runsBefore = toolRuns;
    const refused = await invoke({ runId });
    expect(refused.decision?.permit).toBe(false);
    expect(refused.decision?.code).toBe("60502");
    expect(refused.resultCode).toBe("60502");
    expect(refused.replayed).toBe(false);
    expect(JSON.parse(refused.resultJson).evidence).toEqual([]);
    expect(toolRuns).toBe(runsBefore);
    expect(await storedResults(runId)).toBe(0);
  });
});
