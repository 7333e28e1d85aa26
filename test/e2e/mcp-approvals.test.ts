import pg from "pg";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { useMcpClients } from "../support/mcp-clients";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { eventsOf } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

// A write an agent asks for over MCP is approved by a person: through the REST API (the console, the CLI) by
// default, through the MCP client (approve_call, its own prompt) only where the tenant's policy opens that channel.
// Every confirmation.decided names the channel it came through.
describe("approvals of writes asked over MCP: a person's channel by default, other channels by policy", () => {
  let platform: TestPlatform;
  let pool: pg.Pool;
  const mcp = useMcpClients(() => platform.gatewayUrl);

  const resultOf = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, any>;
  const invokeWrite = async (client: Client, key: string, waitSeconds = 20) =>
    resultOf(
      await client.callTool({ name: "invoke_capability", arguments: { capability_id: "tool:test_write", arguments: { key }, wait_seconds: waitSeconds } }),
    );
  const approveCall = async (client: Client, waiting: Record<string, any>) =>
    (await client.callTool({
      name: "approve_call",
      arguments: { run_id: waiting.run_id, decision: "approve", fingerprint: waiting.waiting_for.fingerprint, wait_seconds: 20 },
    })) as CallToolResult;
  /** Real executions of test_write's side effect in a run (test_side_effects), 0 when none. */
  const executions = async (runId: string) =>
    (await pool.query("SELECT coalesce(sum(count), 0)::int AS n FROM test_side_effects WHERE run_id = $1", [runId])).rows[0].n as number;
  const decisions = async (token: string, runId: string) =>
    (await eventsOf(platform, token, runId)).filter((e) => e.type === "confirmation.decided").map((e) => [e.data.decision, e.data.channel]);
  const controlDecisions = async (sessionId: string) =>
    (
      await pool.query("SELECT permit, code, policy_ids FROM policy_decisions WHERE mcp_session_id = $1 AND action = 'agent.run.control' ORDER BY id", [
        sessionId,
      ])
    ).rows;

  beforeAll(async () => {
    platform = await startTestPlatform();
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
  });

  afterAll(async () => {
    await mcp.closeAll();
    await pool?.end();
    await platform?.teardown();
  });

  it("by default approve_call is forbidden and changes nothing, an administrator's too; the REST API's approval runs the write once", async () => {
    for (const user of [
      { user: "mo", roles: ["member"] },
      { user: "ada", roles: ["admin"] },
    ]) {
      const token = await platform.token({ tenant: "acme", ...user });
      const { client, sessionId } = await mcp.connect(token, "execute");
      const waiting = await invokeWrite(client, `default-${user.user}`);
      expect(waiting).toMatchObject({ state: "awaiting_confirmation", waiting_for: { kind: "confirmation", tool_name: "test_write" } });

      const denied = await approveCall(client, waiting);
      expect(denied.isError).toBe(true);
      expect(resultOf(denied)).toEqual({ code: "60500", message: "the policy decision point denied agent.run.control" });
      // The forbid decided it, over admin-all for the administrator; the run still waits and nothing ran.
      expect(await controlDecisions(sessionId)).toEqual([{ permit: false, code: "60500", policy_ids: ["approvals-from-a-person"] }]);
      expect(await decisions(token, waiting.run_id)).toEqual([]);
      expect(await executions(waiting.run_id)).toBe(0);

      const confirmed = await platform.http("POST", `/v1/agents/runs/${waiting.run_id}/confirmation`, {
        token,
        body: { decision: "approve", fingerprint: waiting.waiting_for.fingerprint },
      });
      expect(confirmed.status).toBe(200);
      const done = resultOf(await client.callTool({ name: "get_run", arguments: { run_id: waiting.run_id } }));
      expect(done).toMatchObject({ state: "succeeded" });
      expect(await decisions(token, waiting.run_id)).toEqual([["approve", "api"]]);
      expect(await executions(waiting.run_id)).toBe(1);
    }
  });

  it("by default a client that can elicit is not asked: the PDP refuses the channel first and the run waits for a person", async () => {
    const token = await platform.token({ tenant: "acme", user: "mia" });
    const asked: string[] = [];
    const { client, sessionId } = await mcp.connect(token, "execute", {
      capabilities: { elicitation: { form: {} } },
      before: (c) =>
        c.setRequestHandler(ElicitRequestSchema, async (request) => {
          asked.push(request.params.message);
          return { action: "accept", content: { decision: "approve" } };
        }),
    });
    const waiting = await invokeWrite(client, "elicit-default");
    expect(waiting).toMatchObject({ state: "awaiting_confirmation", settled: true, waiting_for: { kind: "confirmation" } });
    expect(asked).toEqual([]);
    expect(await controlDecisions(sessionId)).toEqual([{ permit: false, code: "60500", policy_ids: ["approvals-from-a-person"] }]);
    expect(await decisions(token, waiting.run_id)).toEqual([]);
    expect(await executions(waiting.run_id)).toBe(0);
  });

  it("a tenant whose policy opens the MCP channels approves through approve_call and the client's prompt, each recorded with its channel", async () => {
    const admin = await platform.token({ tenant: "initech", user: "ina", roles: ["admin"] });
    const member = await platform.token({ tenant: "initech", user: "ivo" });
    // The tenant's set is installed on its first decision; the administrator narrows the forbid to the REST API
    // and the MCP client's prompt and tool.
    const active = (await platform.http("GET", "/v1/admin/policies", { token: admin })).body.items[0].policies as string;
    const opened = active.replace(
      'context.approval_channel != "api"',
      'context.approval_channel != "api" && context.approval_channel != "mcp_tool" && context.approval_channel != "mcp_elicitation"',
    );
    expect(opened).not.toBe(active);
    const draft = await platform.http("POST", "/v1/admin/policies", { token: admin, body: { policies: opened } });
    expect(draft.status).toBe(201);
    expect((await platform.http("POST", `/v1/admin/policies/${draft.body.version}/activate`, { token: admin })).status).toBe(200);

    const tool = await mcp.connect(member, "execute");
    const first = await invokeWrite(tool.client, "opened-tool");
    // The gateway hears the activation on the bus: a refusal before it arrives changes nothing, so it is asked again.
    const approved = await waitFor(
      async () => {
        const answer = await approveCall(tool.client, first);
        return answer.isError ? undefined : resultOf(answer);
      },
      { intervalMs: 200, what: "approve_call admitted by the new set" },
    );
    expect(approved).toMatchObject({ state: "succeeded" });
    expect(await decisions(member, first.run_id)).toEqual([["approve", "mcp_tool"]]);
    expect(await executions(first.run_id)).toBe(1);

    const asked: string[] = [];
    const prompt = await mcp.connect(member, "execute", {
      capabilities: { elicitation: { form: {} } },
      before: (c) =>
        c.setRequestHandler(ElicitRequestSchema, async (request) => {
          asked.push(request.params.message);
          return { action: "accept", content: { decision: "approve" } };
        }),
    });
    const done = await invokeWrite(prompt.client, "opened-prompt");
    expect(asked).toEqual([expect.stringContaining('test_write with {"key":"opened-prompt"}')]);
    expect(done).toMatchObject({ state: "succeeded", result_code: "ok", result: { written: "opened-prompt", count: 1 } });
    expect(await decisions(member, done.run_id)).toEqual([["approve", "mcp_elicitation"]]);
    expect(await executions(done.run_id)).toBe(1);
  });
});
