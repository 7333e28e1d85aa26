import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf, runToEnd } from "../support/runs";
import { waitFor } from "../support/wait-for";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const mcpServer = require("../support/mcp-test-server.cjs") as { serveHttp(port: number, logFile: string): Promise<Server> };

jest.setTimeout(180_000);

const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);

describe("MCP tool servers: mounted by tool-exec, flagged by Steward's configuration, called through the same policy path", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let http: Server;
  let admin: string;
  let member: string;
  const log = join(mkdtempSync(join(tmpdir(), "steward-mcp-")), "calls.log");
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean) : []);

  function script(req: ChatRequest): Reply {
    const [tool, text] = inputOf(req).split(" ");
    const turn = req.messages.filter((m) => m.role === "tool").length;
    if (turn > 0) return { text: `result: ${req.messages[req.messages.length - 1].content}` };
    return { toolCalls: [{ id: "m0", name: tool, arguments: JSON.stringify(tool.endsWith("echo") ? { text } : {}) }] };
  }

  /** Creates a run and waits (bounded) until it waits for a confirmation or ends; returns the snapshot. */
  async function startRun(input: string, mode: "agent" | "ask" = "agent") {
    const created = await platform.http("POST", "/v1/agents/runs", { token: member, body: { input, mode } });
    expect(created.status).toBe(201);
    return waitFor(
      async () => {
        const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token: member });
        return ["awaiting_confirmation", "succeeded", "failed", "cancelled"].includes(r.body.state) ? r.body : undefined;
      },
      { what: `run "${input}" to wait or end` },
    );
  }

  async function approveAndFinish(runId: string) {
    const approved = await platform.http("POST", `/v1/agents/runs/${runId}/confirmation`, { token: member, body: { decision: "approve" } });
    expect(approved.status).toBe(200);
    return waitFor(async () => {
      const r = await platform.http("GET", `/v1/agents/runs/${runId}`, { token: member });
      return ["succeeded", "failed", "cancelled"].includes(r.body.state) ? r.body : undefined;
    });
  }

  beforeAll(async () => {
    http = await mcpServer.serveHttp(0, log);
    const httpPort = (http.address() as AddressInfo).port;
    model = await startFakeOpenAi(script);
    // Both servers hint that `echo` is read-only and `wipe` not destructive. Steward believes neither: only the
    // remote server's echo is declared read (so offered in ask mode, no confirmation) by this configuration.
    const servers = [
      {
        name: "local",
        transport: "stdio",
        command: process.execPath,
        args: [join(__dirname, "..", "support", "mcp-test-server.cjs")],
        env: { MCP_CALL_LOG: log, PATH: process.env.PATH ?? "" },
      },
      { name: "remote", transport: "http", url: `http://127.0.0.1:${httpPort}/mcp`, tools: { echo: { safety: "read", idempotent: true } } },
    ];
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake", MCP_SERVERS: JSON.stringify(servers) });
    admin = await platform.token({ tenant: "acme", user: "root", roles: ["admin"] });
    member = await platform.token({ tenant: "acme", user: "meg" });
    const base = (await platform.http("GET", "/v1/admin/policies", { token: admin })).body.items[0].policies;
    const withMcp = `${base}\n@id("members-echo")\npermit (principal in Steward::Role::"member", action == Steward::Action::"mcp.tool.invoke", resource) when { [Steward::Tool::"mcp.local.echo", Steward::Tool::"mcp.remote.echo"].contains(resource) };`;
    const draft = await platform.http("POST", "/v1/admin/policies", { token: admin, body: { policies: withMcp } });
    if (draft.status !== 201) throw new Error(`policy upload: ${JSON.stringify(draft.body)}`);
    await platform.http("POST", `/v1/admin/policies/${draft.body.version}/activate`, { token: admin });
  });

  afterAll(async () => {
    await platform?.teardown();
    await model?.close();
    await new Promise((resolve) => http?.close(resolve));
  });

  /** The run's decision log: the policy points the PDP was asked about. */
  const decidedPoints = async (runId: string) =>
    (await platform.http("GET", `/v1/audit/decisions?run_id=${runId}`, { token: admin })).body.items.map((d: { action: string }) => d.action);

  it("a tool Steward's configuration declares read (mcp_remote_echo) runs at once through the PDP, with its point in the decision log", async () => {
    const before = calls().length;
    const run = await runToEnd(platform, member, "mcp_remote_echo hello");
    expect(run.state).toBe("succeeded");
    expect(run.output.text).toContain("http says hello");
    expect(calls().slice(before)).toEqual(['http echo {"text":"hello"}']);
    const events = await eventsOf(platform, member, run.id);
    expect(events.some((e) => e.type === "confirmation_required")).toBe(false);
    expect(events.find((e) => e.type === "tool.decided")?.data).toMatchObject({ permit: true, policy_point: "mcp.remote.echo", policy_ids: ["members-echo"] });
    expect(await decidedPoints(run.id)).toEqual(["mcp.remote.echo"]);
  });

  it("a tool whose server hints read-only (mcp_local_echo) is still write: it waits for confirmation and runs only once approved", async () => {
    const before = calls().length;
    const waiting = await startRun("mcp_local_echo hello");
    expect(waiting.state).toBe("awaiting_confirmation");
    expect(calls().length).toBe(before);
    const asked = (await eventsOf(platform, member, waiting.id)).find((e) => e.type === "confirmation_required");
    expect(asked?.data).toMatchObject({ tool_name: "mcp_local_echo", call_id: "m0" });
    const run = await approveAndFinish(waiting.id);
    expect(run.state).toBe("succeeded");
    expect(run.output.text).toContain("stdio says hello");
    expect(calls().slice(before)).toEqual(['stdio echo {"text":"hello"}']);
    expect(await decidedPoints(run.id)).toEqual(["mcp.local.echo"]);
  });

  it("a tool whose server hints it is not destructive still needs confirmation, and a denied one does not run", async () => {
    const before = calls().length;
    const waiting = await startRun("mcp_local_wipe now");
    expect(waiting.state).toBe("awaiting_confirmation");
    const run = await approveAndFinish(waiting.id);
    const events = await eventsOf(platform, member, run.id);
    expect(events.find((e) => e.type === "tool_result")?.data).toMatchObject({ result_code: "60500", decision: { permit: false } });
    expect(calls().length).toBe(before);
  });

  it("ask mode offers only what Steward's configuration declares read; the server's hints are shown, not applied", async () => {
    const normal = model.requests.find((r) => inputOf(r).startsWith("mcp_remote_echo"))!;
    expect(normal.tools?.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(["mcp_local_echo", "mcp_local_wipe", "mcp_remote_echo", "mcp_remote_wipe"]),
    );
    const described = new Map(normal.tools!.map((t) => [t.function.name, t.function.description]));
    expect(described.get("mcp_local_echo")).toBe("Echoes the text back. (MCP server local; server's hints, not applied: read-only, idempotent)");
    expect(described.get("mcp_remote_wipe")).toMatch(/server's hints, not applied: not read-only, not destructive\)$/);

    const careful = await startRun("mcp_remote_echo careful", "ask");
    expect(careful.state).toBe("succeeded");
    const asked = model.requests.find((r) => inputOf(r) === "mcp_remote_echo careful")!;
    const names = asked.tools?.map((t) => t.function.name) ?? [];
    expect(names).toContain("mcp_remote_echo");
    expect(names).not.toContain("mcp_remote_wipe");
    expect(names).not.toContain("mcp_local_echo");

    // Called anyway in ask mode, the tool the server calls read-only is refused without running.
    const before = calls().length;
    const refused = await startRun("mcp_local_echo sneaky", "ask");
    expect(refused.state).toBe("succeeded");
    const events = await eventsOf(platform, member, refused.id);
    expect(events.find((e) => e.type === "tool_result")?.data).toMatchObject({ result_code: "ASK_MODE_DENIED" });
    expect(calls().length).toBe(before);
  });
});
