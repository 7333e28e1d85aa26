import { Writable } from "node:stream";
import { createLogger } from "./logger";
import { CENSOR, isSensitiveKey, redactDeep } from "./redact";

/** Everything a logger made by createLogger writes, captured. */
function capture(): { logger: ReturnType<typeof createLogger>; text(): string } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger("test", "debug", sink), text: () => chunks.join("") };
}

describe("redactDeep", () => {
  it("censors credentials, prompts and inputs at any depth, and nothing else", () => {
    const secret = { a: { b: { c: { d: { e: { token: "T5", api_key: "K5", "X-Api-Key": "H5", password: "P5", clientSecret: "S5" } } } } } };
    const out = JSON.stringify(redactDeep({ ...secret, usage: { input_tokens: 3, output_tokens: 4 }, key: "k1", note: "fine" }));
    for (const leaked of ["T5", "K5", "H5", "P5", "S5"]) expect(out).not.toContain(leaked);
    expect(out).toContain('"input_tokens":3');
    expect(out).toContain('"key":"k1"');
    expect(out).toContain('"note":"fine"');
  });

  it("walks arrays, survives cycles, and never changes its input", () => {
    const cyclic: Record<string, unknown> = { items: [{ headers: { authorization: "Bearer abc" } }] };
    cyclic.self = cyclic;
    const out = redactDeep(cyclic) as { items: Array<{ headers: { authorization: string } }>; self: unknown };
    expect(out.items[0].headers.authorization).toBe(CENSOR);
    expect(out.self).toBe("[circular]");
    expect((cyclic.items as Array<{ headers: { authorization: string } }>)[0].headers.authorization).toBe("Bearer abc");
  });

  it("removes the password of a URL-shaped string", () => {
    expect(redactDeep({ url: "postgres://steward_gateway:hunter2@db:5432/steward" })).toEqual({ url: `postgres://steward_gateway:${CENSOR}@db:5432/steward` });
    expect(redactDeep("nats://gw:pw@127.0.0.1:4222")).toBe(`nats://gw:${CENSOR}@127.0.0.1:4222`);
    expect(redactDeep("http://127.0.0.1:9/v1")).toBe("http://127.0.0.1:9/v1");
  });

  it("knows a credential's name in any spelling", () => {
    for (const name of ["Authorization", "NATS_PASSWORD", "LLM_API_KEY", "STEWARD_JWT_SECRET", "refresh_token", "privateKey", "set-cookie", "prompt"]) {
      expect([name, isSensitiveKey(name)]).toEqual([name, true]);
    }
    for (const name of ["input_tokens", "maxOutputTokens", "key", "run_id", "tool"]) expect([name, isSensitiveKey(name)]).toEqual([name, false]);
  });
});

describe("createLogger", () => {
  it("writes no nested secret, in plain fields, errors and their causes, or child bindings", () => {
    const { logger, text } = capture();
    logger.info({ call: { request: { headers: { authorization: "Bearer tok-1" } }, body: { nested: { api_key: "key-2" } } } }, "call");
    const cause = Object.assign(new Error("inner"), { password: "pw-3" });
    const err = Object.assign(new Error("outer", { cause }), { config: { headers: { Authorization: "Bearer tok-4" } } });
    logger.error({ err }, "failed");
    logger.child({ session: { token: "tok-5" } }).warn({ config: { DATABASE_URL: "postgres://r:pw-6@db/steward" } }, "child");
    const written = text();
    for (const leaked of ["tok-1", "key-2", "pw-3", "tok-4", "tok-5", "pw-6"]) expect(written).not.toContain(leaked);
    expect(written).toContain('"message":"outer: inner"');
    expect(written).toContain(CENSOR);
  });
});
