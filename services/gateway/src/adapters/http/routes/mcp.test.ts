import type { FastifyInstance } from "fastify";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createLogger, NotFoundError, UnauthenticatedError } from "@steward/platform";
import type { RunSnapshot, StoredRunEvent } from "@steward/contract";
import { buildApp, type AppDeps } from "../app";
import type { DecideForSession } from "../../../app/decide-for-session";
import { createRunFollower, type RunWakeups } from "../../../app/run-outcome";
import type { RunReads } from "../../../app/read-runs";
import { capabilityOf } from "../../../domain/capability-search";

const RUN_ID = "0b6f1c6e-8d1f-4a57-9a35-5d0c2f3e9a10";
const SNAPSHOT = {
  id: RUN_ID,
  state: "succeeded",
  mode: "ask",
  input: "hello",
  response_language: null,
  created_at: "2026-01-01T12:00:00.000000Z",
  started_at: "2026-01-01T12:00:00.100000Z",
  finished_at: "2026-01-01T12:00:01.000000Z",
  deadline_at: "2026-01-01T12:03:00.000000Z",
  output: { text: "hi", evidence: [] },
  error: null,
  usage: { input_tokens: 1, output_tokens: 2, model_calls: 1, tool_calls: 0 },
} as unknown as RunSnapshot;
/** A run that invokes save_note: waits for its confirmation until confirmed, then succeeds with the invocation's result. */
const WRITE_RUN = "5d1c7a2e-3b4f-4c6d-8e9f-0a1b2c3d4e5f";
const FINGERPRINT = "f".repeat(64);
const writeRun = { confirmed: false };
const writeSnapshot = (): RunSnapshot =>
  ({
    ...SNAPSHOT,
    id: WRITE_RUN,
    mode: "agent",
    state: writeRun.confirmed ? "succeeded" : "awaiting_confirmation",
    output: writeRun.confirmed ? { text: '{"capability_id":"tool:save_note","result":{"saved":true},"result_code":"ok"}', evidence: [] } : null,
  }) as unknown as RunSnapshot;
const writeEvents = (): StoredRunEvent[] =>
  [
    { type: "run.queued", data: {}, metadata: { seq: 1 } },
    { type: "confirmation_required", data: { tool_name: "save_note", arguments: '{"title":"t"}', fingerprint: FINGERPRINT }, metadata: { seq: 2 } },
    ...(writeRun.confirmed
      ? [
          { type: "confirmation.decided", data: {}, metadata: { seq: 3 } },
          { type: "run.succeeded", data: {}, metadata: { seq: 4 } },
        ]
      : []),
  ] as unknown as StoredRunEvent[];

const EVENTS = [
  { type: "run.queued", data: {}, metadata: { seq: 1 } },
  { type: "tool_call", data: { tool_name: "knowledge_search" }, metadata: { seq: 2 } },
  { type: "run.succeeded", data: {}, metadata: { seq: 3 } },
] as unknown as StoredRunEvent[];

interface Created {
  mode?: string;
  mcpSessionId?: string;
  mcpMode?: string;
  invocation?: { capability_id: string; calls: Array<{ call_id: string; tool_name: string; arguments: string }> };
}

interface Decided {
  user: string;
  point: string;
  resource: string;
  session: string;
  mode: string;
  channel?: string;
}

/** The gateway with fakes behind /mcp; tokens name users of tenants: "acme.alice", "acme.admin" (admin), "globex.eve". */
function appWithFakes(decided: Decided[], created: Created[], controlled: unknown[][], limits: Record<string, number> = { perUser: 2 }): FastifyInstance {
  const runs: RunReads = {
    list: async () => ({ items: [], total: 0 }),
    get: async (caller, id) => {
      if (caller.tenantId !== "acme" || (id !== RUN_ID && id !== WRITE_RUN)) throw new NotFoundError();
      return id === WRITE_RUN ? writeSnapshot() : SNAPSHOT;
    },
    finished: async () => true,
    events: async (id, page) => (id === WRITE_RUN ? writeEvents() : EVENTS).filter((e) => e.metadata.seq > page.after).slice(0, page.limit),
  };
  const feed: RunWakeups = { watch: () => ({ ready: Promise.resolve(), close: () => undefined }) };
  const decide: DecideForSession = async (principal, point, resource, session, options) => {
    const channel = options?.approvalChannel ? { channel: options.approvalChannel } : {};
    decided.push({ user: principal.userId, point, resource: resource.id, session: session.id, mode: session.mode, ...channel });
    const permit = point !== "agent.mcp.session" || resource.id !== "admin" || principal.roles.includes("admin");
    return { permit, code: permit ? "" : "60500" };
  };
  const deps = {
    logger: createLogger("gateway-test", "silent"),
    authenticate: async (authorization?: string) => {
      const m = /^Bearer (acme|globex)\.(\w+)$/.exec(authorization ?? "");
      if (!m) throw new UnauthenticatedError();
      return { tenantId: m[1], userId: m[2], roles: m[2] === "admin" ? ["admin"] : ["member"] };
    },
    authorize: async () => undefined,
    runs,
    createRun: async () => SNAPSHOT,
    controls: { answer: async () => SNAPSHOT, confirm: async () => SNAPSHOT, cancel: async () => SNAPSHOT },
    policyAdmin: {},
    threads: {},
    feed,
    mcp: {
      decide,
      createRun: async (cmd: { body: { mode?: string }; mcpSessionId?: string; mcpMode?: string; invocation?: Created["invocation"] }) => {
        created.push({ mode: cmd.body.mode, mcpSessionId: cmd.mcpSessionId, ...(cmd.invocation ? { invocation: cmd.invocation, mcpMode: cmd.mcpMode } : {}) });
        return cmd.invocation?.capability_id === "tool:save_note" ? writeSnapshot() : SNAPSHOT;
      },
      controls: {
        answer: async (_p: unknown, runId: string, answer: string) => (controlled.push(["answer", runId, answer]), SNAPSHOT),
        confirm: async (_p: unknown, runId: string, decision: string, _t: string, channel: string, fingerprint?: string) => {
          controlled.push(["confirm", runId, decision, channel, fingerprint]);
          if (runId === WRITE_RUN) writeRun.confirmed = true;
          return SNAPSHOT;
        },
        cancel: async (_p: unknown, runId: string) => (controlled.push(["cancel", runId]), SNAPSHOT),
      },
      grantedDatasets: async (tenantId: string) => (tenantId === "acme" ? ["sales", "hr"] : []),
      // The audit's record of sessions: it cannot be written for the user "unrecorded".
      journal: {
        opened: async (session: { userId: string }) => {
          if (session.userId === "unrecorded") throw new Error("the store is away");
        },
        closed: async () => undefined,
      },
      follow: createRunFollower({ reads: runs, feed }),
      capabilities: async () => [
        capabilityOf({
          name: "save_note",
          description: "Saves a note.",
          inputSchemaJson: "{}",
          safety: "write",
          policyPoint: "knowledge.document.write",
          requireConfirmation: true,
        }),
        capabilityOf({
          name: "run_query",
          description: "Runs a query.",
          inputSchemaJson: "{}",
          safety: "read",
          policyPoint: "dataset.read",
          requireConfirmation: false,
        }),
      ],
      limits,
    },
  } as unknown as AppDeps;
  return buildApp(deps);
}

describe("the /mcp endpoint", () => {
  const decided: Decided[] = [];
  const created: Created[] = [];
  const controlled: unknown[][] = [];
  const app = appWithFakes(decided, created, controlled);
  let base = "";
  const clients: Client[] = [];
  beforeAll(async () => {
    base = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await app.close();
  });

  async function connect(token: string | undefined, mode?: string) {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (mode) headers["steward-mcp-mode"] = mode;
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } });
    const client = new Client({ name: "test", version: "1" });
    await client.connect(transport);
    clients.push(client);
    return { client, transport, sessionId: transport.sessionId! };
  }

  async function post(token: string | null, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        ...headers,
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
  }

  it("opens a session after the PDP permits its mode, and refuses a mode it denies, a bad mode and a bad token with problems", async () => {
    const { sessionId } = await connect("acme.alice", "execute");
    expect(decided.at(-1)).toEqual({ user: "alice", point: "agent.mcp.session", resource: "execute", session: sessionId, mode: "execute" });
    await expect(connect("acme.alice", "admin")).rejects.toMatchObject({ code: 403 });
    await expect(connect("acme.admin", "admin")).resolves.toBeDefined();
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const bad = await post("acme.alice", init, { "steward-mcp-mode": "root" });
    expect(bad.status).toBe(400);
    expect(bad.type).toMatch(/^application\/problem\+json/);
    const anonymous = await post(null, init);
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.body)).toMatchObject({ status: 401, code: 10011 });
  });

  it("answers another principal's session exactly as an unknown one, and a request without a session as the transport does", async () => {
    const { sessionId } = await connect("acme.alice", "observe");
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const theirs = await post("globex.eve", list, { "mcp-session-id": sessionId });
    const colleague = await post("acme.bob", list, { "mcp-session-id": sessionId });
    const unknown = await post("globex.eve", list, { "mcp-session-id": "00000000-0000-4000-8000-000000000000" });
    expect(theirs).toEqual(unknown);
    expect(colleague).toEqual(unknown);
    expect(unknown.status).toBe(404);
    expect((await post("acme.alice", list, { "mcp-session-id": sessionId })).status).toBe(200);
    const none = await post("acme.alice", list);
    expect(none.status).toBe(400);
    expect(JSON.parse(none.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 }, id: null });
  });

  it("runs an Observe session's question as an ask run named after the session, with progress, and decides every call", async () => {
    const { client, sessionId } = await connect("acme.alice", "observe");
    const progress: string[] = [];
    const result = (await client.callTool({ name: "run_question", arguments: { input: "hello" } }, undefined, {
      onprogress: (p) => progress.push(String(p.message)),
    })) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ run_id: RUN_ID, state: "succeeded", answer: "hi", settled: true });
    expect(progress).toEqual(["run.queued", "tool_call knowledge_search", "run.succeeded"]);
    expect(created.at(-1)).toEqual({ mode: "ask", mcpSessionId: sessionId });
    expect(decided.filter((d) => d.session === sessionId).map((d) => d.point)).toEqual(["agent.mcp.session", "agent.run.create"]);

    const observeMode = (await client.callTool({ name: "run_question", arguments: { input: "hello", mode: "agent" } })) as CallToolResult;
    expect(observeMode.isError).toBe(true);
    expect(observeMode.structuredContent).toMatchObject({ code: "10001" });
    await expect(client.callTool({ name: "approve_call", arguments: {} })).rejects.toThrow(/no tool/);
  });

  it("keeps at most the per-user bound of sessions: opening one more closes the least recently used", async () => {
    const first = await connect("acme.carol", "observe");
    await connect("acme.carol", "observe");
    await connect("acme.carol", "observe");
    const list = { jsonrpc: "2.0", id: 3, method: "tools/list" };
    expect((await post("acme.carol", list, { "mcp-session-id": first.sessionId })).status).toBe(404);
  });

  it("answers and approves through the runs' controls in Execute, the approval bound to the fingerprint, and searches without running", async () => {
    const { client, sessionId } = await connect("acme.alice", "execute");
    const fingerprint = "a".repeat(64);
    const approved = (await client.callTool({
      name: "approve_call",
      arguments: { run_id: RUN_ID, decision: "approve", fingerprint, wait_seconds: 0 },
    })) as CallToolResult;
    expect(approved.structuredContent).toMatchObject({ run_id: RUN_ID, state: "succeeded" });
    const unbound = (await client.callTool({ name: "approve_call", arguments: { run_id: RUN_ID, decision: "approve" } })) as CallToolResult;
    expect(unbound.structuredContent).toMatchObject({ code: "10001" });
    await client.callTool({ name: "answer_question", arguments: { run_id: RUN_ID, answer: "EU", wait_seconds: 0 } });
    expect(controlled).toEqual([
      ["confirm", RUN_ID, "approve", "mcp_tool", fingerprint],
      ["answer", RUN_ID, "EU"],
    ]);
    const found = (await client.callTool({ name: "search_capabilities", arguments: { query: "store a note" } })) as CallToolResult;
    expect(found.structuredContent).toEqual({ capabilities: [expect.objectContaining({ id: "tool:save_note", route: "write" })] });
    // The approval is decided naming its channel (the default policy set forbids it; here every decision permits).
    expect(decided.filter((d) => d.session === sessionId).map((d) => [d.point, d.resource, d.channel])).toEqual([
      ["agent.mcp.session", "execute", undefined],
      ["agent.run.control", RUN_ID, "mcp_tool"],
      ["agent.run.control", RUN_ID, undefined],
      ["agent.mcp.session", "execute", undefined],
    ]);
  });

  it("invokes no write in Observe and no dataset capability before a workspace is selected; creates nothing for either", async () => {
    const { client, sessionId } = await connect("acme.alice", "observe");
    const before = created.length;
    const write = (await client.callTool({
      name: "invoke_capability",
      arguments: { capability_id: "tool:save_note", arguments: { title: "t" } },
    })) as CallToolResult;
    expect(write).toMatchObject({ isError: true, structuredContent: { code: "OBSERVE_MODE_DENIED" } });
    const explore = (await client.callTool({ name: "explore_dataset", arguments: { action: "run_query", sql: "select 1" } })) as CallToolResult;
    expect(explore).toMatchObject({ isError: true, structuredContent: { code: "WORKSPACE_SELECTION_REQUIRED" } });
    const unknown = (await client.callTool({ name: "invoke_capability", arguments: { capability_id: "tool:drop_tables", arguments: {} } })) as CallToolResult;
    expect(unknown).toMatchObject({ isError: true, structuredContent: { code: "10050" } });
    expect(created.length).toBe(before);
    // Each call was decided, naming the session; the write was decided on its own point with its safety.
    expect(decided.filter((d) => d.session === sessionId).map((d) => d.point)).toEqual([
      "agent.mcp.session",
      "agent.run.create",
      "knowledge.document.write",
      "agent.run.create",
      "agent.run.create",
    ]);
    const notGranted = (await client.callTool({ name: "select_workspace", arguments: { dataset: "payroll" } })) as CallToolResult;
    expect(notGranted).toMatchObject({ isError: true, structuredContent: { code: "DATASET_NOT_ALLOWED" } });
  });

  it("runs a dataset capability after the workspace's focus, and switching workspace in Execute cancels the old workspace's runs", async () => {
    const { client } = await connect("acme.alice", "execute");
    expect((await client.callTool({ name: "select_workspace", arguments: { dataset: "sales" } })).structuredContent).toEqual({
      workspace: "sales",
      previous: null,
      revoked_runs: [],
    });
    await client.callTool({ name: "explore_dataset", arguments: { action: "run_query", sql: "select 1", wait_seconds: 0 } });
    expect(created.at(-1)?.invocation).toEqual({
      capability_id: "tool:run_query",
      calls: [
        { call_id: "invoke-1", tool_name: "focus_dataset", arguments: '{"dataset":"sales"}' },
        { call_id: "invoke-2", tool_name: "run_query", arguments: '{"sql":"select 1"}' },
      ],
    });
    expect(created.at(-1)?.mcpMode).toBe("execute");
    controlled.length = 0;
    const switched = (await client.callTool({ name: "select_workspace", arguments: { dataset: "hr" } })).structuredContent;
    expect(switched).toEqual({ workspace: "hr", previous: "sales", revoked_runs: [RUN_ID] });
    expect(controlled).toEqual([["cancel", RUN_ID]]);
  });

  it("asks the person for a write's approval through the client's elicitation, bound to the call's fingerprint", async () => {
    writeRun.confirmed = false;
    controlled.length = 0;
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: "Bearer acme.dora", "steward-mcp-mode": "execute" } },
    });
    const client = new Client({ name: "test", version: "1" }, { capabilities: { elicitation: { form: {} } } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { decision: "approve" } };
    });
    await client.connect(transport);
    clients.push(client);
    const result = (await client.callTool({
      name: "invoke_capability",
      arguments: { capability_id: "tool:save_note", arguments: { title: "t" }, wait_seconds: 5 },
    })) as CallToolResult;
    expect(asked).toEqual([expect.stringContaining('save_note with {"title":"t"}')]);
    expect(controlled).toEqual([["confirm", WRITE_RUN, "approve", "mcp_elicitation", FINGERPRINT]]);
    expect(decided.filter((d) => d.user === "dora" && d.channel)).toEqual([
      expect.objectContaining({ point: "agent.run.control", resource: WRITE_RUN, channel: "mcp_elicitation" }),
    ]);
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ run_id: WRITE_RUN, state: "succeeded", result_code: "ok", result: { saved: true } });
  });

  it("answers a write waiting for approval with what it waits for when the client cannot elicit", async () => {
    writeRun.confirmed = false;
    controlled.length = 0;
    const { client } = await connect("acme.erin", "execute");
    const result = (await client.callTool({
      name: "invoke_capability",
      arguments: { capability_id: "tool:save_note", arguments: { title: "t" }, wait_seconds: 0 },
    })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({
      run_id: WRITE_RUN,
      state: "awaiting_confirmation",
      result_code: null,
      waiting_for: { kind: "confirmation", tool_name: "save_note", fingerprint: FINGERPRINT },
    });
    expect(controlled).toEqual([]);
  });

  it("opens no session the audit cannot record: the initialize answers 503 and nothing is held", async () => {
    await expect(connect("acme.unrecorded", "observe")).rejects.toMatchObject({ code: 503 });
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const refused = await post("acme.unrecorded", init);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ status: 503, code: 10503 });
    // The PDP permitted the mode; the session never existed all the same.
    expect(decided.filter((d) => d.user === "unrecorded").map((d) => d.point)).toEqual(["agent.mcp.session", "agent.mcp.session"]);
  });
});

describe("the /mcp endpoint's per-tenant share of the gateway's sessions", () => {
  const app = appWithFakes([], [], [], { perUser: 2, perTenant: 2, max: 100 });
  let base = "";
  beforeAll(async () => {
    base = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await app.close();
  });

  const initialize = async (token: string) => {
    const res = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "steward-mcp-mode": "observe",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      }),
    });
    return { status: res.status, body: await res.text() };
  };

  it("refuses a tenant's session beyond its share with 429 while another tenant still opens one", async () => {
    expect((await initialize("acme.alice")).status).toBe(200);
    expect((await initialize("acme.bob")).status).toBe(200);
    const refused = await initialize("acme.carol");
    expect([refused.status, JSON.parse(refused.body).code]).toEqual([429, 10429]);
    expect((await initialize("globex.eve")).status).toBe(200);
  });
});
