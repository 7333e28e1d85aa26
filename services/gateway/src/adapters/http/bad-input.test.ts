import type { FastifyInstance } from "fastify";
import { createLogger } from "@steward/platform";
import { buildApp, type AppDeps } from "./app";

/** The HTTP surface with fakes behind it: a create that would succeed, so any refusal is the body's. */
function appWithFakes(created: unknown[]): FastifyInstance {
  const deps = {
    logger: createLogger("gateway-test", "silent"),
    authenticate: async () => ({ tenantId: "acme", userId: "alice", roles: ["member"] }),
    authorize: async () => undefined,
    createRun: async (command: { body: unknown }) => {
      created.push(command.body);
      return { id: "00000000-0000-4000-8000-000000000001" };
    },
    controls: { answer: async () => ({}), confirm: async () => ({}), cancel: async () => ({}) },
  } as unknown as AppDeps;
  return buildApp(deps);
}

let base = "";

/** Over a real socket: Fastify's inject() cannot load under this jest setup. */
async function post(payload: string | Buffer, contentType?: string): Promise<{ statusCode: number; headers: Headers; json(): any }> {
  const res = await fetch(`${base}/v1/agents/runs`, {
    method: "POST",
    headers: { authorization: "Bearer x", ...(contentType ? { "content-type": contentType } : {}) },
    body: payload,
  });
  const text = await res.text();
  return { statusCode: res.status, headers: res.headers, json: () => JSON.parse(text) };
}

describe("bad request bodies", () => {
  const created: unknown[] = [];
  const app = appWithFakes(created);
  beforeAll(async () => {
    base = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => app.close());
  beforeEach(() => (created.length = 0));

  it("creates a run from a well-formed body (the fakes work)", async () => {
    const res = await post(JSON.stringify({ input: "hi \uD83D\uDE00" }), "application/json");
    expect(res.statusCode).toBe(201);
    expect(created).toEqual([{ input: "hi \uD83D\uDE00" }]);
  });

  it.each([
    ["a lone surrogate", '{"input":"\\ud800"}'],
    ["a lone low surrogate in a nested key", '{"input":"x","mode":{"\\udc00":1}}'],
    ["a NUL character", '{"input":"a\\u0000b"}'],
  ])("answers 400/10001 to %s, before anything is created", async (_label, payload) => {
    const res = await post(payload, "application/json");
    expect([res.statusCode, res.json().code]).toEqual([400, 10001]);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(created).toEqual([]);
  });

  it("answers 400/10001 to bytes that are not UTF-8", async () => {
    const res = await post(Buffer.concat([Buffer.from('{"input":"'), Buffer.from([0xed, 0xa0, 0x80, 0xff]), Buffer.from('"}')]), "application/json");
    expect([res.statusCode, res.json().code, res.json().detail]).toEqual([400, 10001, "the request body is not valid UTF-8"]);
    expect(created).toEqual([]);
  });

  it("answers 413/10413 to a body over 256 KiB", async () => {
    const res = await post(JSON.stringify({ input: "x".repeat(300 * 1024) }), "application/json");
    expect(res.json()).toMatchObject({ status: 413, code: 10413, title: "Content Too Large" });
    expect(created).toEqual([]);
  });

  it.each([
    ["text/plain", "text/plain"],
    ["form data", "application/x-www-form-urlencoded"],
    ["no content type", undefined],
  ])("answers 415/10415 to %s", async (_label, contentType) => {
    const res = await post('{"input":"hi"}', contentType);
    expect(res.json()).toMatchObject({ status: 415, code: 10415, title: "Unsupported Media Type" });
    expect(created).toEqual([]);
  });

  it.each([
    ["unparsable JSON", '{"input":'],
    ["an empty body", ""],
    ["a poisoned prototype", '{"input":"hi","__proto__":{"admin":true}}'],
  ])("answers 400/10001 to %s", async (_label, payload) => {
    const res = await post(payload, "application/json");
    expect([res.statusCode, res.json().code]).toEqual([400, 10001]);
  });

  it.each([
    ["a path that does not decode", "/v1/agents/runs/%E0%A4%A"],
    ["a path byte that is not UTF-8", "/%ff"],
    ["a query value that is a lone surrogate", "/v1/agents/runs?page=%ED%A0%80"],
    ["a query value that is NUL", "/v1/agents/runs?page=%00"],
  ])("answers 400/10001 problem details to %s", async (_label, path) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: "Bearer x" } });
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status: 400, code: 10001 });
  });
});
