import pg from "pg";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf } from "../support/runs";

jest.setTimeout(180_000);

// Issue 17: Steward serves its own MCP endpoint (/mcp on the gateway) to external agents, through the same
// tokens, policy, approvals and decision log as the REST API.
const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);

/** "question <tag>": searches the knowledge base, then answers. "note <tag>": saves a note (a write: confirmed first). */
function script(req: ChatRequest): Reply {
  const [kind, tag] = inputOf(req).split(" ");
  const turn = req.messages.filter((m) => m.role === "tool").length;
  if (turn > 0) return { text: kind === "note" ? `Saved the note ${tag}.` : `The answer is 42 (${tag}).` };
  if (kind === "note") return { toolCalls: [{ id: "n0", name: "save_note", arguments: JSON.stringify({ title: `MCP note ${tag}`, body: "Written over MCP." }) }] };
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
  const clients: Client[] = [];

  const mcpUrl = () => new URL(`${platform.gatewayUrl}/mcp`);

  /** An SDK client over streamable HTTP with a bearer token, in a mode (none: the header is not sent). */
  async function connect(token: string | undefined, mode?: Mode | string) {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (mode !== undefined) headers["steward-mcp-mode"] = mode;
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { requestInit: { headers } });
    const client = new Client({ name: "steward-e2e", version: "1.0.0" });
    await client.connect(transport);
    clients.push(client);
    return { client, transport, sessionId: transport.sessionId! };
  }

  const resultOf = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, any>;
  const notes = async (title: string) =>
    (await pool.query("SELECT count(*)::int AS n FROM kb_documents WHERE tenant_id = 'acme' AND title = $1", [title])).rows[0].n as number;
  const decisionsOf = async (sessionId: string) =>
    (
      await pool.query(
        "SELECT action, resource_type, resource_id, permit, code, mcp_mode, run_id::text FROM policy_decisions WHERE mcp_session_id = $1 ORDER BY id",
        [sessionId],
      )
    ).rows as Array<{ action: string; resource_type: string; resource_id: string; permit: boolean; code: string; mcp_mode: string; run_id: string | null }>;
  const count = async (sql: string) => (await pool.query(sql)).rows[0].n as number;

  /** One raw request on /mcp (to compare answers byte for byte). */
  async function rawMcp(token: string, sessionId: string, body: unknown) {
    const res = await fetch(mcpUrl(), {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  }

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    member = await platform.token({ tenant: "acme", user: "mo" });
    admin = await platform.token({ tenant: "acme", user: "ada", roles: ["admin"] });
    outsider = await platform.token({ tenant: "globex", user: "eve" });
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
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
    const refused = await pool.query(
      "SELECT mcp_mode, code FROM policy_decisions WHERE user_id = 'mo' AND action = 'agent.mcp.session' AND NOT permit",
    );
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
    expect(await names("observe")).toEqual(["run_question", "get_run", "search_capabilities"]);
    expect(await names("execute")).toEqual(["run_question", "get_run", "answer_question", "approve_call", "search_capabilities"]);
    expect(await names("admin", admin)).toEqual(["run_question", "get_run", "answer_question", "approve_call", "search_capabilities"]);
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
    expect((await decisionsOf(sessionId)).map((d) => d.action)).toEqual(["agent.mcp.session", "agent.run.create"]);

    const read = resultOf(await client.callTool({ name: "get_run", arguments: { run_id: result.run_id, wait_seconds: 0 } }));
    expect(read).toMatchObject({ run_id: result.run_id, state: "succeeded", answer: "The answer is 42 (a)." });
  });

  it("a write waits for approve_call in Execute, runs once on the approval; Observe cannot approve", async () => {
    const execute = await connect(member, "execute");
    const observe = await connect(member, "observe");
    const waiting = resultOf(await execute.client.callTool({ name: "run_question", arguments: { input: "note b" } }));
    expect(waiting).toMatchObject({
      state: "awaiting_confirmation",
      settled: true,
      waiting_for: { kind: "confirmation", tool_name: "save_note", fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect(JSON.parse(waiting.waiting_for.arguments)).toEqual({ title: "MCP note b", body: "Written over MCP." });
    expect(await notes("MCP note b")).toBe(0);

    // Observe has no approve_call: calling it is a protocol error, and nothing is decided or recorded.
    await expect(
      observe.client.callTool({ name: "approve_call", arguments: { run_id: waiting.run_id, decision: "approve", fingerprint: waiting.waiting_for.fingerprint } }),
    ).rejects.toThrow(/no tool "approve_call"/);
    expect((await decisionsOf(observe.sessionId)).map((d) => d.action)).toEqual(["agent.mcp.session"]);
    expect(await notes("MCP note b")).toBe(0);

    const approve = { run_id: waiting.run_id, decision: "approve", fingerprint: waiting.waiting_for.fingerprint };
    const done = resultOf(await execute.client.callTool({ name: "approve_call", arguments: approve }));
    expect(done).toMatchObject({ state: "succeeded", answer: "Saved the note b." });
    expect(await notes("MCP note b")).toBe(1);

    // Approving again: the run no longer waits (409's code), nothing runs twice.
    const twice = (await execute.client.callTool({ name: "approve_call", arguments: approve })) as CallToolResult;
    expect(twice.isError).toBe(true);
    expect(resultOf(twice).code).toBe("10090");
    expect(await notes("MCP note b")).toBe(1);

    const decided = (await eventsOf(platform, member, waiting.run_id)).filter((e) => e.type === "confirmation.decided");
    expect(decided.map((e) => [e.data.decision, e.data.fingerprint])).toEqual([["approve", waiting.waiting_for.fingerprint]]);

    // The decision log names the session for each of its calls, with the run where the call names one.
    expect((await decisionsOf(execute.sessionId)).map((d) => [d.action, d.permit, d.mcp_mode, d.run_id])).toEqual([
      ["agent.mcp.session", true, "execute", null],
      ["agent.run.create", true, "execute", null],
      ["agent.run.control", true, "execute", waiting.run_id],
      ["agent.run.control", true, "execute", waiting.run_id],
    ]);
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
  });
});
