import { Writable } from "node:stream";
import Fastify, { LogController, type FastifyBaseLogger } from "fastify";
import { createLogger } from "@steward/platform";
import { requestLoggerFactory } from "./request-logger";

/** A logger as the gateway makes it, its lines collected; and a count of the children made from it. */
function collectingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger("gateway", "info", destination);
  const made = jest.spyOn(logger, "child");
  /** Forgets what was logged and made so far (Fastify's own child and "listening" line while it starts). */
  const forget = () => {
    lines.length = 0;
    made.mockClear();
  };
  return { logger, lines, made, forget };
}

/** GET `path` from a listening app (light-my-request's inject does not load under jest here). */
async function get(app: Awaited<ReturnType<typeof listening>>, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}${path}`);
  return { status: res.status, body: await res.json() };
}

/** The app listening; what Fastify logs and makes for itself while it starts is forgotten. */
async function listening(logger: FastifyBaseLogger, forget: () => void) {
  const app = appWith(logger);
  await app.listen({ port: 0, host: "127.0.0.1" });
  forget();
  return app;
}

function appWith(logger: FastifyBaseLogger) {
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLoggerFactory,
  });
  app.get("/quiet", async () => ({ ok: true }));
  app.get("/noisy", async (request) => {
    request.log.warn({ token: "s3cr3t", what: "thing" }, "something worth saying");
    request.log.child({ step: 2 }).info("from a child");
    return { level: request.log.level };
  });
  return app;
}

describe("a request's logger", () => {
  it("given requests that log nothing, then no child logger is made for them", async () => {
    const { logger, lines, made, forget } = collectingLogger();
    const app = await listening(logger, forget);
    for (let i = 0; i < 3; i++) expect((await get(app, "/quiet")).status).toBe(200);
    expect(made).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    await app.close();
  });

  it("given a request that logs, then its lines carry the request's id, redacted as the gateway's own, and its children add their bindings", async () => {
    const { logger, lines, made, forget } = collectingLogger();
    const app = await listening(logger, forget);
    const res = await get(app, "/noisy");
    expect(res).toEqual({ status: 200, body: { level: "info" } });
    // One child for the request (its id), then the route's own child of it (pino's children share the parent's `child`).
    expect(made.mock.calls.map(([bindings]) => Object.keys(bindings))).toEqual([["reqId"], ["step"]]);
    const [warned, fromChild] = lines;
    expect(warned).toMatchObject({ level: 40, service: "gateway", what: "thing", msg: "something worth saying" });
    expect(typeof warned.reqId).toBe("string");
    expect(JSON.stringify(warned)).not.toContain("s3cr3t");
    expect(fromChild).toMatchObject({ level: 30, reqId: warned.reqId, step: 2, msg: "from a child" });
    await app.close();
  });

  it("given a logger's level, then a request's logger reports it and logs below it nothing", async () => {
    const { logger, lines, forget } = collectingLogger();
    logger.level = "error";
    const app = await listening(logger, forget);
    const res = await get(app, "/noisy");
    expect(res.body).toEqual({ level: "error" });
    expect(lines).toEqual([]);
    await app.close();
  });
});
