import { request as httpRequest } from "node:http";
import Fastify from "fastify";
import { ConfigError, createLogger } from "@steward/platform";
import { createErrorHandler } from "./problem";
import { LOOPBACK_HOSTS, hostNameOf, hostNames, originList, originServed, registerHostOriginCheck } from "./host-origin";

describe("the names a gateway serves", () => {
  it("reads a Host header's name without its port, lowercased; anything else names none", () => {
    expect(hostNameOf("127.0.0.1:8080")).toBe("127.0.0.1");
    expect(hostNameOf("Steward.Example.com")).toBe("steward.example.com");
    expect(hostNameOf("[::1]:8080")).toBe("::1");
    expect(hostNameOf("[::1]")).toBe("::1");
    for (const bad of ["", "a b", "host:port", "host:80:81", "[::1", "[::1]x", "user@host", "host/path", "-x.com"]) expect(hostNameOf(bad)).toBeNull();
  });

  it("takes host names and origins at boot, and refuses what is neither", () => {
    expect([...hostNames(LOOPBACK_HOSTS)(undefined, "H")]).toEqual(["localhost", "127.0.0.1", "::1"]);
    expect([...hostNames(LOOPBACK_HOSTS)("Steward.example.com, api.example.com", "H")]).toEqual(["steward.example.com", "api.example.com"]);
    for (const bad of ["https://steward.example.com", "steward.example.com:443", "*", "a,,b"])
      expect(() => hostNames(LOOPBACK_HOSTS)(bad, "H")).toThrow(ConfigError);
    expect([...originList("https://console.example.com, http://localhost:5173", "O")]).toEqual(["https://console.example.com", "http://localhost:5173"]);
    expect([...originList(undefined, "O")]).toEqual([]);
    for (const bad of ["console.example.com", "https://console.example.com/app", "file:///x", "null"]) expect(() => originList(bad, "O")).toThrow(ConfigError);
  });

  it("serves an origin on an allowed host (any port, http or https) or a listed one; never null or another name", () => {
    const names = { hosts: new Set(["127.0.0.1", "::1"]), origins: new Set(["https://console.example.com"]) };
    expect(originServed("http://127.0.0.1:8080", names)).toBe(true);
    expect(originServed("http://[::1]:3000", names)).toBe(true);
    expect(originServed("https://console.example.com", names)).toBe(true);
    for (const refused of ["null", "http://attacker.example:8080", "https://console.example.com:8443", "ftp://127.0.0.1", "garbage"]) {
      expect(originServed(refused, names)).toBe(false);
    }
  });
});

/** One GET with the headers as given (fetch would not send another Host); its status and JSON body. */
function get(port: number, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path: "/v1/thing", headers }, (res) => {
      let text = "";
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the Host and Origin check on every route", () => {
  const app = Fastify();
  let port = 0;
  app.setErrorHandler(createErrorHandler(createLogger("test", "silent")));
  registerHostOriginCheck(app, { hosts: new Set(["localhost", "127.0.0.1"]), origins: new Set() });
  app.get("/v1/thing", async () => ({ ok: true }));
  beforeAll(async () => {
    await app.listen({ host: "127.0.0.1", port: 0 });
    port = (app.server.address() as { port: number }).port;
  });
  afterAll(() => app.close());

  it("answers a served host, with or without a served origin", async () => {
    expect((await get(port, { host: "127.0.0.1:8080" })).status).toBe(200);
    expect((await get(port, { host: "localhost", origin: "http://localhost:8080" })).status).toBe(200);
  });

  it("refuses a rebound name with 421 and a foreign origin with 403, as problems, before the route", async () => {
    const rebound = await get(port, { host: "attacker.example:8080" });
    expect(rebound.status).toBe(421);
    expect(rebound.body).toMatchObject({ status: 421, code: 10001, detail: "the Host header names no host this gateway serves" });
    const foreign = await get(port, { host: "127.0.0.1:8080", origin: "http://attacker.example:8080" });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ status: 403, code: 10031, detail: "requests from this origin are refused" });
    expect((await get(port, { host: "127.0.0.1", origin: "null" })).status).toBe(403);
  });
});
