import { startTestPlatform, type TestPlatform } from "../support/platform";
import { namedRequest } from "../support/named-request";

jest.setTimeout(120_000);

// A DNS-rebinding page: a name of the attacker's, resolved to the gateway's address, so the browser calls the gateway
// as that page's own origin. Its requests carry the attacker's name in Host (and Origin); the gateway serves only
// the names it is configured with (GATEWAY_ALLOWED_HOSTS, default loopback), before any route, token or body.
describe("Host and Origin: a gateway answers only to its own names", () => {
  let platform: TestPlatform;
  let port: string;
  let member: string;
  const rebound = () => `rebound.attacker.example:${port}`;
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
  };
  const mcpHeaders = (host: string) => ({
    host,
    authorization: `Bearer ${member}`,
    accept: "application/json, text/event-stream",
    "steward-mcp-mode": "observe",
  });

  beforeAll(async () => {
    // The development sign-in answers here, as in a development gateway: the prize of a rebinding page.
    platform = await startTestPlatform({ STEWARD_TEST_DEV_SIGN_IN: "1" });
    port = new URL(platform.gatewayUrl).port;
    member = await platform.token({ tenant: "acme", user: "mo" });
  });

  afterAll(async () => {
    await platform?.teardown();
  });

  it("answers its own names, and refuses a rebound name with 421 on every surface: the sign-in, the API, /mcp, the console", async () => {
    const own = await namedRequest(`${platform.gatewayUrl}/v1/dev/sign-in`, { method: "POST", headers: { host: `localhost:${port}` } });
    expect(own.status).toBe(200);
    expect(JSON.parse(own.text)).toMatchObject({ token: expect.any(String) });

    for (const [method, path, headers, body] of [
      ["POST", "/v1/dev/sign-in", { host: rebound() }, undefined],
      ["GET", "/v1/agents/runs", { host: rebound(), authorization: `Bearer ${member}` }, undefined],
      ["POST", "/v1/agents/runs", { host: rebound(), authorization: `Bearer ${member}` }, { input: "hello" }],
      ["POST", "/mcp", mcpHeaders(rebound()), initialize],
      ["GET", "/console/", { host: rebound() }, undefined],
    ] as const) {
      const answer = await namedRequest(`${platform.gatewayUrl}${path}`, { method, headers, body });
      expect([path, answer.status]).toEqual([path, 421]);
      expect(JSON.parse(answer.text)).toMatchObject({ code: 10001, detail: "the Host header names no host this gateway serves" });
      expect(answer.text).not.toContain("token");
    }
    const runs = await platform.http("GET", "/v1/agents/runs", { token: member });
    expect(runs.body.items).toEqual([]);
  });

  it("refuses a browser's call from a foreign origin with 403, even on its own Host", async () => {
    for (const origin of [`http://${rebound()}`, "null"]) {
      const signIn = await namedRequest(`${platform.gatewayUrl}/v1/dev/sign-in`, { method: "POST", headers: { host: `127.0.0.1:${port}`, origin } });
      expect(signIn.status).toBe(403);
      expect(JSON.parse(signIn.text)).toMatchObject({ code: 10031, detail: "requests from this origin are refused" });
    }
    const own = await namedRequest(`${platform.gatewayUrl}/v1/dev/sign-in`, {
      method: "POST",
      headers: { host: `127.0.0.1:${port}`, origin: platform.gatewayUrl },
    });
    expect(own.status).toBe(200);
  });

  it("binds an MCP session to the Host it was opened on: the transport's own protection refuses another name", async () => {
    const opened = await namedRequest(`${platform.gatewayUrl}/mcp`, { method: "POST", headers: mcpHeaders(`127.0.0.1:${port}`), body: initialize });
    expect(opened.status).toBe(200);
    const session = String(opened.headers["mcp-session-id"]);
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const onSession = (host: string) =>
      namedRequest(`${platform.gatewayUrl}/mcp`, {
        method: "POST",
        headers: { ...mcpHeaders(host), "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
        body: list,
      });
    // localhost is one of the gateway's names, but not the one this session was opened on.
    const elsewhere = await onSession(`localhost:${port}`);
    expect(elsewhere.status).toBe(403);
    expect(JSON.parse(elsewhere.text)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    expect((await onSession(`127.0.0.1:${port}`)).status).toBe(200);
  });
});
