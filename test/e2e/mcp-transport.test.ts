import pg from "pg";
import { useMcpClients } from "../support/mcp-clients";
import { startTestPlatform, type TestPlatform } from "../support/platform";

jest.setTimeout(120_000);

// What /mcp refuses before any tool runs, as an attacker would send it: a JSON-RPC batch (one request carrying
// many calls against one draw of the rate limiter) and arguments nested past the body's bound. The MCP server's
// sessions, catalogue and capabilities are test/e2e/mcp-server.test.ts's.
describe("the MCP endpoint's transport: what it refuses before any tool", () => {
  let platform: TestPlatform;
  let pool: pg.Pool;
  let member: string;
  const mcp = useMcpClients(() => platform.gatewayUrl);
  const connect = (token: string, mode: string) => mcp.connect(token, mode);
  const rawMcp = mcp.raw;
  const decisionsOf = async (sessionId: string) => (await pool.query("SELECT id FROM policy_decisions WHERE mcp_session_id = $1", [sessionId])).rows;

  beforeAll(async () => {
    platform = await startTestPlatform();
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    member = await platform.token({ tenant: "acme", user: "mo" });
  });

  afterAll(async () => {
    await mcp.closeAll();
    await pool?.end();
    await platform?.teardown();
  });

  it("a JSON-RPC batch is refused whole (400, -32600) and runs nothing: one request is one call, as the rate limits count", async () => {
    const { client, sessionId } = await connect(member, "observe");
    const decided = (await decisionsOf(sessionId)).length;
    const search = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "knowledge_search", arguments: { query: "refund" } } });
    const batch = await rawMcp(
      member,
      sessionId,
      Array.from({ length: 100 }, (_, i) => search(i + 1)),
    );
    expect([batch.status, JSON.parse(batch.text).error.code]).toEqual([400, -32600]);
    // A batch of one, too: the shape is refused, not the count.
    expect((await rawMcp(member, sessionId, [search(1)])).status).toBe(400);
    expect((await decisionsOf(sessionId)).length).toBe(decided);
    // One message per request is served as before.
    expect((await rawMcp(member, sessionId, search(101))).status).toBe(200);
    expect((await decisionsOf(sessionId)).length).toBeGreaterThan(decided);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("arguments nested deeper than 32 levels are refused 400/10001 before any tool, logging no error; the session goes on", async () => {
    const { client, sessionId } = await connect(member, "observe");
    const errorsBefore = platform.services.gateway.lines.filter((l) => /"level":(50|60)/.test(l)).length;
    const call = (query: string) =>
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"invoke_capability","arguments":{"capability_id":"tool:knowledge_search","arguments":{"query":${query}}}}}`;
    const deep = await rawMcp(member, sessionId, call(`${"[".repeat(20_000)}${"]".repeat(20_000)}`));
    expect([deep.status, deep.type, JSON.parse(deep.text).code]).toEqual([400, "application/problem+json; charset=utf-8", 10001]);
    expect(JSON.parse(deep.text).detail).toMatch(/more than 32 levels deep/);
    // Within the bound, the call reaches its capability (which refuses a query that is not a string).
    const shallow = await rawMcp(member, sessionId, call(`${"[".repeat(20)}${"]".repeat(20)}`));
    expect(shallow.status).toBe(200);
    expect(platform.services.gateway.lines.filter((l) => /"level":(50|60)/.test(l)).length).toBe(errorsBefore);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });
});
