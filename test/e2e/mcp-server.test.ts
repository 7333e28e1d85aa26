import pg from "pg";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { useMcpClients } from "../support/mcp-clients";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

// Steward serves its own MCP endpoint (/mcp on the gateway) to external agents, through the same
// tokens, policy, approvals and decision log as the REST API.
const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);

/** "question <tag>": searches the knowledge base, then answers. */
function script(req: ChatRequest): Reply {
  const tag = inputOf(req).split(" ")[1];
  const turn = req.messages.filter((m) => m.role === "tool").length;
  if (turn > 0) return { text: `The answer is 42 (${tag}).` };
  return { toolCalls: [{ id: "k0", name: "knowledge_search", arguments: JSON.stringify({ query: "shipping regions" }) }] };
}

type Mode = "observe" | "execute" | "admin";

describe("Steward as an MCP server: sessions in modes, a fixed catalogue, runs and approvals through the PDP", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let member: string;
  let admin: string;
  let outsider: string;
  const mcp = useMcpClients(() => platform.gatewayUrl);
  const connect = (token: string | undefined, mode?: Mode | string) => mcp.connect(token, mode);

  const resultOf = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, any>;
  const decisionsOf = async (sessionId: string) =>
    (
      await pool.query(
        "SELECT action, resource_type, resource_id, permit, code, mcp_mode, run_id::text FROM policy_decisions WHERE mcp_session_id = $1 ORDER BY id",
        [sessionId],
      )
    ).rows as Array<{ action: string; resource_type: string; resource_id: string; permit: boolean; code: string; mcp_mode: string; run_id: string | null }>;
  const count = async (sql: string) => (await pool.query(sql)).rows[0].n as number;
  /** Real executions of the test tools' side effects in a run (test_side_effects), 0 when none. */
  const executions = async (runId: string) =>
    (await pool.query("SELECT coalesce(sum(count), 0)::int AS n FROM test_side_effects WHERE run_id = $1", [runId])).rows[0].n as number;
  const invoke = async (client: Client, capability: string, args: Record<string, unknown>, more: Record<string, unknown> = {}) =>
    (await client.callTool({ name: "invoke_capability", arguments: { capability_id: capability, arguments: args, ...more } })) as CallToolResult;

  const rawMcp = mcp.raw;

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({
      LLM_BASE_URL: model.baseUrl,
      LLM_API_KEY: "sk-test",
      LLM_MODEL: "fake",
      DATASET_TENANTS: '{"demo":["acme"],"archive":["acme"]}',
    });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    member = await platform.token({ tenant: "acme", user: "mo" });
    admin = await platform.token({ tenant: "acme", user: "ada", roles: ["admin"] });
    outsider = await platform.token({ tenant: "globex", user: "eve" });
  });

  afterAll(async () => {
    await mcp.closeAll();
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("opens a session in each mode the policy allows, Observe by default; a member is refused Admin, a bad mode and no token too", async () => {
    for (const [token, mode] of [
      [member, undefined],
      [member, "observe"],
      [member, "execute"],
      [admin, "admin"],
    ] as const) {
      const { sessionId } = await connect(token, mode);
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const [opened] = await decisionsOf(sessionId);
      expect(opened).toMatchObject({ action: "agent.mcp.session", resource_id: mode ?? "observe", permit: true, mcp_mode: mode ?? "observe" });
    }
    await expect(connect(member, "admin")).rejects.toMatchObject({ code: 403 });
    const refused = await pool.query("SELECT mcp_mode, code FROM policy_decisions WHERE user_id = 'mo' AND action = 'agent.mcp.session' AND NOT permit");
    expect(refused.rows).toEqual([{ mcp_mode: "admin", code: "60500" }]);
    await expect(connect(member, "root")).rejects.toMatchObject({ code: 400 });
    await expect(connect(undefined, "observe")).rejects.toMatchObject({ code: 401 });
  });

  it("lists a compact catalogue fixed per mode: the same twice, Observe without answer and approve", async () => {
    const names = async (mode: Mode, token = member) => {
      const { client } = await connect(token, mode);
      const first = await client.listTools();
      expect(await client.listTools()).toEqual(first);
      for (const t of first.tools) expect(t.inputSchema.type).toBe("object");
      return first.tools.map((t) => t.name);
    };
    const reads = ["run_question", "get_run", "knowledge_search", "explore_dataset", "select_workspace", "search_capabilities", "invoke_capability"];
    const writes = ["run_question", "get_run", "answer_question", "approve_call", ...reads.slice(2)];
    expect(await names("observe")).toEqual(reads);
    expect(await names("execute")).toEqual(writes);
    expect(await names("admin", admin)).toEqual([...writes, "list_tenant_runs"]);
  });

  it("search_capabilities answers stable ids with a schema digest, policy point and route, and runs nothing", async () => {
    const { client, sessionId } = await connect(member, "observe");
    const decisions = () => count("SELECT count(*)::int AS n FROM policy_decisions WHERE tenant_id = 'acme'");
    const runs = () => count("SELECT count(*)::int AS n FROM runs WHERE tenant_id = 'acme'");
    const [decisionsBefore, runsBefore] = [await decisions(), await runs()];

    const found = resultOf(await client.callTool({ name: "search_capabilities", arguments: { query: "save a note" } }));
    expect(found.capabilities[0]).toEqual({
      id: "tool:save_note",
      description: expect.any(String),
      schema_digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      policy_point: "knowledge.document.write",
      route: "write",
      requires_confirmation: true,
      domain: "knowledge",
    });
    const again = resultOf(await client.callTool({ name: "search_capabilities", arguments: { query: "save a note" } }));
    expect(again).toEqual(found);
    const knowledge = resultOf(await client.callTool({ name: "search_capabilities", arguments: { query: "search the knowledge base", domain: "knowledge" } }));
    expect(knowledge.capabilities[0]).toMatchObject({ id: "tool:knowledge_search", route: "read", policy_point: "knowledge.document.read" });
    expect(knowledge.capabilities.every((c: { domain: string }) => c.domain === "knowledge")).toBe(true);

    // Three searches: three decisions of the session's own point, nothing else decided, no run.
    expect(await decisions()).toBe(decisionsBefore + 3);
    expect((await decisionsOf(sessionId)).slice(1).map((d) => [d.action, d.resource_id, d.permit])).toEqual([
      ["agent.mcp.session", "observe", true],
      ["agent.mcp.session", "observe", true],
      ["agent.mcp.session", "observe", true],
    ]);
    expect(await runs()).toBe(runsBefore);

    const bad = (await client.callTool({ name: "search_capabilities", arguments: { query: "x", limit: 3 } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(resultOf(bad).code).toBe("10001");
  });

  it("run_question starts a run as the session's user, reports its events as progress and answers with the result", async () => {
    const { client, sessionId } = await connect(member, "observe");
    const progress: Progress[] = [];
    const result = resultOf(
      await client.callTool({ name: "run_question", arguments: { input: "question a" } }, undefined, { onprogress: (p) => progress.push(p) }),
    );
    expect(result).toMatchObject({ state: "succeeded", answer: "The answer is 42 (a).", error: null, waiting_for: null, settled: true });
    expect(Array.isArray(result.evidence)).toBe(true);
    const messages = progress.map((p) => p.message);
    expect(messages[0]).toBe("run.queued");
    expect(messages).toEqual(expect.arrayContaining(["tool_call knowledge_search", "run.succeeded"]));
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));

    // The run is the member's own, an ask run (Observe never writes), and it names the session it came from.
    const run = await platform.http("GET", `/v1/agents/runs/${result.run_id}`, { token: member });
    expect(run.body).toMatchObject({ state: "succeeded", mode: "ask", output: { text: "The answer is 42 (a)." } });
    const [queued] = await eventsOf(platform, member, result.run_id);
    expect(queued).toMatchObject({ type: "run.queued", data: { mcp_session_id: sessionId, created_by: "mo" } });
    // The session's decisions: its opening, the run, and tool-exec's decision of the run's tool call (naming the run).
    expect((await decisionsOf(sessionId)).map((d) => [d.action, d.mcp_mode, d.run_id])).toEqual([
      ["agent.mcp.session", "observe", null],
      ["agent.run.create", "observe", null],
      ["knowledge.document.read", "observe", result.run_id],
    ]);

    const read = resultOf(await client.callTool({ name: "get_run", arguments: { run_id: result.run_id, wait_seconds: 0 } }));
    expect(read).toMatchObject({ run_id: result.run_id, state: "succeeded", answer: "The answer is 42 (a)." });
  });

  it("another tenant's token on a session is answered as an unknown session and sees nothing of the tenant's runs", async () => {
    const own = await connect(member, "observe");
    const { run_id } = resultOf(await own.client.callTool({ name: "run_question", arguments: { input: "question c" } }));
    const list = { jsonrpc: "2.0", id: 7, method: "tools/list" };

    const foreign = await rawMcp(outsider, own.sessionId, list);
    const unknown = await rawMcp(outsider, "00000000-0000-4000-8000-000000000000", list);
    expect(foreign).toEqual(unknown);
    expect(foreign.status).toBe(404);
    expect(JSON.parse(foreign.text)).toEqual({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
    // The owner's own request on it is served.
    expect((await rawMcp(member, own.sessionId, list)).status).toBe(200);

    // Their own session: the member's run is as absent as a run that does not exist.
    const theirs = await connect(outsider, "observe");
    const read = async (id: string) => resultOf(await theirs.client.callTool({ name: "get_run", arguments: { run_id: id, wait_seconds: 0 } }));
    expect(await read(run_id)).toEqual(await read("00000000-0000-4000-8000-000000000000"));
    expect(await read(run_id)).toMatchObject({ code: "10050" });
  });

  it("a call the PDP denies runs nothing; an administrator reads a session's decisions from the audit API", async () => {
    const lee = await platform.token({ tenant: "acme", user: "lee" });
    const { client, sessionId } = await connect(lee, "execute");
    const revoked = await platform.http("DELETE", "/v1/admin/members/lee/roles/member", { token: admin });
    expect(revoked.status).toBe(200);
    const runsBefore = await count("SELECT count(*)::int AS n FROM runs WHERE tenant_id = 'acme' AND created_by = 'lee'");
    const denied = (await client.callTool({ name: "run_question", arguments: { input: "question d" } })) as CallToolResult;
    expect(denied.isError).toBe(true);
    expect(resultOf(denied)).toEqual({ code: "60500", message: "the policy decision point denied agent.run.create" });
    expect(await count("SELECT count(*)::int AS n FROM runs WHERE tenant_id = 'acme' AND created_by = 'lee'")).toBe(runsBefore);

    const audit = await platform.http("GET", `/v1/audit/decisions?mcp_session_id=${sessionId}`, { token: admin });
    expect(audit.status).toBe(200);
    expect(audit.body.items.map((d: Record<string, unknown>) => [d.action, d.permit, d.code, d.mcp_session_id, d.mcp_mode])).toEqual([
      ["agent.mcp.session", true, null, sessionId, "execute"],
      ["agent.run.create", false, "60500", sessionId, "execute"],
    ]);
  });

  it("a session ended by its client (DELETE) is gone", async () => {
    const { transport, sessionId } = await connect(member, "observe");
    await transport.terminateSession();
    const after = await rawMcp(member, sessionId, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(after.status).toBe(404);

    // The audit's record of the session: opened, then closed with the reason; administrators only.
    const record = await waitFor(async () => {
      const listed = await platform.http("GET", "/v1/audit/mcp-sessions?user_id=mo", { token: admin });
      const found = listed.body.items.find((s: { id: string }) => s.id === sessionId);
      return found?.closed_at ? found : undefined;
    });
    expect(record).toMatchObject({ user_id: "mo", mode: "observe", opened_at: expect.any(String), close_reason: "the client ended it" });
    expect((await platform.http("GET", "/v1/audit/mcp-sessions", { token: member })).status).toBe(403);
    const foreign = await platform.http("GET", "/v1/audit/mcp-sessions", { token: await platform.token({ tenant: "globex", user: "gabe", roles: ["admin"] }) });
    expect(foreign.body.items.map((s: { id: string }) => s.id)).not.toContain(sessionId);
  });

  it("invoke_capability runs a read capability as a run without a model: permitted for the session, decided again by tool-exec", async () => {
    const { client, sessionId } = await connect(member, "observe");
    const requests = model.requests.length;
    const answer = await invoke(client, "tool:knowledge_search", { query: "shipping regions", limit: 2 });
    expect(answer.isError).toBeUndefined();
    const result = resultOf(answer);
    expect(result).toMatchObject({ state: "succeeded", capability_id: "tool:knowledge_search", result_code: "ok", settled: true });
    expect(result.result).toMatchObject({ matches: expect.any(Number), passages: expect.any(Array) });
    expect(model.requests.length).toBe(requests); // no model was asked
    const events = await eventsOf(platform, member, result.run_id);
    expect(events[0]).toMatchObject({
      type: "run.queued",
      data: { mode: "ask", mcp_session_id: sessionId, mcp_mode: "observe", invocation: { capability_id: "tool:knowledge_search" } },
    });
    expect(events.map((e) => e.type)).toEqual(["run.queued", "run.started", "tool_call", "tool.decided", "tool_result", "run.succeeded"]);
    // The session's decisions: the run, the capability's own point (before the run), tool-exec's permit of the call.
    expect((await decisionsOf(sessionId)).slice(1).map((d) => [d.action, d.resource_id, d.permit, d.mcp_mode, d.run_id])).toEqual([
      ["agent.run.create", "", true, "observe", null],
      ["knowledge.document.read", "knowledge_search", true, "observe", null],
      ["knowledge.document.read", "knowledge_search", true, "observe", result.run_id],
    ]);
    // The core catalogue's knowledge_search is the same capability.
    expect(resultOf(await client.callTool({ name: "knowledge_search", arguments: { query: "shipping regions" } }))).toMatchObject({ result_code: "ok" });
  });

  it("a write is refused in Observe by the policy; a capability the policy denies never runs; neither makes a run", async () => {
    const observe = await connect(member, "observe");
    const runs = () => count("SELECT count(*)::int AS n FROM runs WHERE tenant_id = 'acme' AND created_by = 'mo'");
    const before = await runs();
    const write = await invoke(observe.client, "tool:test_write", { key: "observe" });
    expect(write.isError).toBe(true);
    expect(resultOf(write)).toMatchObject({ code: "60500" });
    expect((await decisionsOf(observe.sessionId)).at(-1)).toMatchObject({
      action: "knowledge.document.read",
      resource_id: "test_write",
      permit: false,
      mcp_mode: "observe",
    });

    const execute = await connect(member, "execute");
    const guarded = await invoke(execute.client, "tool:test_guarded", {});
    expect(resultOf(guarded)).toMatchObject({ code: "60500" });
    expect((await decisionsOf(execute.sessionId)).at(-1)).toMatchObject({ action: "knowledge.document.write", resource_id: "test_guarded", permit: false });
    expect(await runs()).toBe(before);
  });

  it("a write invoked in Execute waits for a person's approval (REST), then runs exactly once; a retry with its key answers the same run", async () => {
    const { client } = await connect(member, "execute");
    const waiting = resultOf(await invoke(client, "tool:test_write", { key: "w1" }, { idempotency_key: "mcp-w1", wait_seconds: 20 }));
    expect(waiting).toMatchObject({ state: "awaiting_confirmation", result_code: null, waiting_for: { kind: "confirmation", tool_name: "test_write" } });
    expect(await executions(waiting.run_id)).toBe(0);
    const confirmed = await platform.http("POST", `/v1/agents/runs/${waiting.run_id}/confirmation`, {
      token: member,
      body: { decision: "approve", fingerprint: waiting.waiting_for.fingerprint },
    });
    expect(confirmed.status).toBe(200);
    const done = resultOf(await client.callTool({ name: "get_run", arguments: { run_id: waiting.run_id } }));
    expect(done).toMatchObject({ state: "succeeded", settled: true });
    const retried = resultOf(await invoke(client, "tool:test_write", { key: "w1" }, { idempotency_key: "mcp-w1", wait_seconds: 0 }));
    expect(retried).toMatchObject({ run_id: waiting.run_id, state: "succeeded", result_code: "ok", result: { written: "w1", count: 1 } });
    expect(await executions(waiting.run_id)).toBe(1);
  });

  it("dataset capabilities need a selected workspace; switching it in Execute cancels the session's runs on the old one", async () => {
    expect((await platform.http("PUT", "/v1/admin/datasets/demo", { token: admin })).status).toBeLessThan(300);
    expect((await platform.http("PUT", "/v1/admin/datasets/archive", { token: admin })).status).toBeLessThan(300);
    const { client } = await connect(member, "execute");
    const before = (await client.callTool({ name: "explore_dataset", arguments: { action: "list_tables" } })) as CallToolResult;
    expect(before.isError).toBe(true);
    expect(resultOf(before)).toMatchObject({ code: "WORKSPACE_SELECTION_REQUIRED" });
    expect(resultOf(await client.callTool({ name: "select_workspace", arguments: { dataset: "ledger" } }))).toMatchObject({ code: "DATASET_NOT_ALLOWED" });

    expect(resultOf(await client.callTool({ name: "select_workspace", arguments: { dataset: "demo" } }))).toEqual({
      workspace: "demo",
      previous: null,
      revoked_runs: [],
    });
    const tables = resultOf(await client.callTool({ name: "explore_dataset", arguments: { action: "list_tables" } }));
    expect(tables).toMatchObject({ state: "succeeded", capability_id: "tool:list_tables", result_code: "ok" });
    const calls = (await eventsOf(platform, member, tables.run_id)).filter((e) => e.type === "tool_result").map((e) => [e.data.tool_name, e.data.result_code]);
    expect(calls).toEqual([
      ["focus_dataset", "ok"],
      ["list_tables", "ok"],
    ]);

    const pending = resultOf(await invoke(client, "tool:test_write", { key: "w2" }, { wait_seconds: 20 }));
    expect(pending.state).toBe("awaiting_confirmation");
    const switched = resultOf(await client.callTool({ name: "select_workspace", arguments: { dataset: "archive" } }));
    expect(switched).toEqual({ workspace: "archive", previous: "demo", revoked_runs: [pending.run_id] });
    const revoked = resultOf(await client.callTool({ name: "get_run", arguments: { run_id: pending.run_id, wait_seconds: 20 } }));
    expect(revoked).toMatchObject({ state: "cancelled" });
    expect(await executions(pending.run_id)).toBe(0);
  });
});
