import type { FastifyInstance } from "fastify";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
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
const EVENTS = [
  { type: "run.queued", data: {}, metadata: { seq: 1 } },
  { type: "tool_call", data: { tool_name: "knowledge_search" }, metadata: { seq: 2 } },
  { type: "run.succeeded", data: {}, metadata: { seq: 3 } },
] as unknown as StoredRunEvent[];

interface Decided {
  user: string;
  point: string;
  resource: string;
  session: string;
  mode: string;
}

/** The gateway with fakes behind /mcp; tokens name users of tenants: "acme.alice", "acme.admin" (admin), "globex.eve". */
function appWithFakes(decided: Decided[], created: Array<{ mode?: string; mcpSessionId?: string }>, controlled: unknown[][]): FastifyInstance {
  const runs: RunReads = {
    list: async () => ({ items: [], total: 0 }),
    get: async (caller, id) => {
      if (caller.tenantId !== "acme" || id !== RUN_ID) throw new NotFoundError();
      return SNAPSHOT;
    },
    finished: async () => true,
    events: async (_id, page) => EVENTS.filter((e) => e.metadata.seq > page.after).slice(0, page.limit),
  };
  const feed: RunWakeups = { watch: () => ({ ready: Promise.resolve(), close: () => undefined }) };
  const decide: DecideForSession = async (principal, point, resource, session) => {
    decided.push({ user: principal.userId, point, resource: resource.id, session: session.id, mode: session.mode });
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
      createRun: async (cmd: { body: { mode?: string }; mcpSessionId?: string }) => {
        created.push({ mode: cmd.body.mode, mcpSessionId: cmd.mcpSessionId });
        return SNAPSHOT;
      },
      controls: {
        answer: async (_p: unknown, runId: string, answer: string) => (controlled.push(["answer", runId, answer]), SNAPSHOT),
        confirm: async (_p: unknown, runId: string, decision: string, _t: string, fingerprint?: string) => (controlled.push(["confirm", runId, decision, fingerprint]), SNAPSHOT),
        cancel: async () => SNAPSHOT,
      },
      follow: createRunFollower({ reads: runs, feed }),
      capabilities: async () => [
        capabilityOf({ name: "save_note", description: "Saves a note.", inputSchemaJson: "{}", safety: "write", policyPoint: "knowledge.document.write", requireConfirmation: true }),
      ],
      limits: { perUser: 2 },
    },
  } as unknown as AppDeps;
  return buildApp(deps);
}

describe("the /mcp endpoint", () => {
  const decided: Decided[] = [];
  const created: Array<{ mode?: string; mcpSessionId?: string }> = [];
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
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } };
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
    const result = (await client.callTool({ name: "run_question", arguments: { input: "hello" } }, undefined, { onprogress: (p) => progress.push(String(p.message)) })) as CallToolResult;
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
    const approved = (await client.callTool({ name: "approve_call", arguments: { run_id: RUN_ID, decision: "approve", fingerprint, wait_seconds: 0 } })) as CallToolResult;
    expect(approved.structuredContent).toMatchObject({ run_id: RUN_ID, state: "succeeded" });
    const unbound = (await client.callTool({ name: "approve_call", arguments: { run_id: RUN_ID, decision: "approve" } })) as CallToolResult;
    expect(unbound.structuredContent).toMatchObject({ code: "10001" });
    await client.callTool({ name: "answer_question", arguments: { run_id: RUN_ID, answer: "EU", wait_seconds: 0 } });
    expect(controlled).toEqual([
      ["confirm", RUN_ID, "approve", fingerprint],
      ["answer", RUN_ID, "EU"],
    ]);
    const found = (await client.callTool({ name: "search_capabilities", arguments: { query: "store a note" } })) as CallToolResult;
    expect(found.structuredContent).toEqual({ capabilities: [expect.objectContaining({ id: "tool:save_note", route: "write" })] });
    expect(decided.filter((d) => d.session === sessionId).map((d) => [d.point, d.resource])).toEqual([
      ["agent.mcp.session", "execute"],
      ["agent.run.control", RUN_ID],
      ["agent.run.control", RUN_ID],
      ["agent.mcp.session", "execute"],
    ]);
  });
});
