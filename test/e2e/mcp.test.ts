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

describe("MCP tool servers: mounted by tool-exec, called through the same policy path", () => {
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

  beforeAll(async () => {
    http = await mcpServer.serveHttp(0, log);
    const httpPort = (http.address() as AddressInfo).port;
    model = await startFakeOpenAi(script);
    const servers = [
      { name: "local", transport: "stdio", command: process.execPath, args: [join(__dirname, "..", "support", "mcp-test-server.cjs")], env: { MCP_CALL_LOG: log, PATH: process.env.PATH ?? "" } },
      { name: "remote", transport: "http", url: `http://127.0.0.1:${httpPort}/mcp` },
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

  it.each([
    ["mcp_local_echo", "local", "stdio"],
    ["mcp_remote_echo", "remote", "http"],
  ])("a permitted MCP tool (%s) runs through the PDP, with its point in the decision log", async (tool, server, label) => {
    const before = calls().length;
    const run = await runToEnd(platform, member, `${tool} hello`);
    expect(run.state).toBe("succeeded");
    expect(run.output.text).toContain(`${label} says hello`);
    expect(calls().slice(before)).toEqual([`${label} echo {"text":"hello"}`]);
    const events = await eventsOf(platform, member, run.id);
    expect(events.find((e) => e.type === "tool.decided")?.data).toMatchObject({ permit: true, policy_point: `mcp.${server}.echo`, policy_ids: ["members-echo"] });
    const log = await platform.http("GET", `/v1/audit/decisions?run_id=${run.id}`, { token: admin });
    expect(log.body.items.map((d: { action: string }) => d.action)).toEqual([`mcp.${server}.echo`]);
  });

  it("a denied MCP tool does not run", async () => {
    const before = calls().length;
    const run = await runToEnd(platform, member, "mcp_local_wipe now");
    const events = await eventsOf(platform, member, run.id);
    expect(events.find((e) => e.type === "tool_result")?.data).toMatchObject({ result_code: "60500", decision: { permit: false } });
    expect(calls().length).toBe(before);
  });

  it("the mounted tools carry their safety from the server's annotations: ask mode offers the read-only one only", async () => {
    const normal = model.requests.find((r) => inputOf(r).startsWith("mcp_local_echo"))!;
    expect(normal.tools?.map((t) => t.function.name)).toEqual(expect.arrayContaining(["mcp_local_echo", "mcp_local_wipe", "mcp_remote_echo", "mcp_remote_wipe"]));
    const created = await platform.http("POST", "/v1/agents/runs", { token: member, body: { input: "mcp_remote_echo careful", mode: "ask" } });
    expect(created.status).toBe(201);
    await waitFor(async () => {
      const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token: member });
      return ["succeeded", "failed"].includes(r.body.state) ? true : undefined;
    });
    const asked = model.requests.find((r) => inputOf(r) === "mcp_remote_echo careful")!;
    const names = asked.tools?.map((t) => t.function.name) ?? [];
    expect(names).toContain("mcp_remote_echo");
    expect(names).not.toContain("mcp_remote_wipe");
  });
});
