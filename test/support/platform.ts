import { randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import { connectNats, type NatsConnection } from "@steward/platform";
import { jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@steward/contract";
import { freshDatabase, freshNamespace, loadDemoDataset, natsUrl } from "./databases";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const launcher = require("../../infra/local/launcher.cjs") as {
  startPlatform(env: Record<string, string>, options?: Record<string, unknown>): Promise<RunningPlatform>;
  startService(service: string, env: Record<string, string>, options?: { readyMsg?: string }): Promise<RunningService>;
};

export interface RunningService {
  child: import("node:child_process").ChildProcess;
  lines: string[];
  stop(): Promise<void>;
}

interface RunningPlatform {
  services: { policy: RunningService; toolExec: RunningService; runner: RunningService; gateway: RunningService };
  gatewayUrl: string;
  policyAddr: string;
  toolExecAddr: string;
  stop(): Promise<void>;
}

export interface TestPlatform extends RunningPlatform {
  databaseUrl: string;
  namespace: string;
  token(claims: { tenant: string; user: string; roles?: string[] }): Promise<string>;
  http(method: string, path: string, options?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
  nats(): Promise<NatsConnection>;
  /** Starts one more agent-runner on the same database, bus and tool-exec; stopped at teardown. */
  startRunner(env?: Record<string, string>): Promise<RunningService>;
  teardown(): Promise<void>;
}

/** The four services as real processes on a fresh database and NATS namespace. */
export async function startTestPlatform(extraEnv: Record<string, string> = {}): Promise<TestPlatform> {
  const db = await freshDatabase("steward_e2e");
  await loadDemoDataset(db.url);
  const namespace = freshNamespace("e");
  const secret = randomBytes(32).toString("base64url");
  const env = {
    DATABASE_URL: db.url,
    NATS_URL: natsUrl,
    STEWARD_ENV: "test",
    STEWARD_NATS_NAMESPACE: namespace,
    STEWARD_JWT_SECRET: secret,
    LOG_LEVEL: "info",
    // Several suites may hold platforms at once; keep each one's share of PostgreSQL's connections small.
    PG_POOL_MAX: "4",
    // Health ports picked by each process: a suite may run several runners.
    HEALTH_PORT: "0",
    ...extraEnv,
  };
  const running = await launcher.startPlatform(env).catch(async (err: unknown) => {
    await db.drop();
    throw err;
  });
  const connections: NatsConnection[] = [];
  const extraRunners: RunningService[] = [];
  const key = new TextEncoder().encode(secret);
  return {
    ...running,
    databaseUrl: db.url,
    namespace,
    token: ({ tenant, user, roles = ["member"] }) =>
      new SignJWT({ tid: tenant, roles })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject(user)
        .setIssuedAt()
        .setExpirationTime("1h")
        .sign(key),
    async http(method, path, options = {}) {
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      let body: string | undefined = options.rawBody;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers["content-type"] = "application/json";
      } else if (body !== undefined && !headers["content-type"]) {
        headers["content-type"] = "application/json";
      }
      const res = await fetch(`${running.gatewayUrl}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async nats() {
      const nc = await connectNats(natsUrl, "steward-e2e");
      connections.push(nc);
      return nc;
    },
    async startRunner(runnerEnv = {}) {
      const runner = await launcher.startService(
        "agent-runner",
        { ...env, TOOL_EXEC_ADDR: running.toolExecAddr, ...runnerEnv },
        { readyMsg: "ready" },
      );
      extraRunners.push(runner);
      return runner;
    },
    async teardown() {
      for (const r of extraRunners) await r.stop();
      await running.stop();
      const nc = await connectNats(natsUrl, "steward-e2e-cleanup");
      const jsm = await jetstreamManager(nc);
      const names = busNames(namespace);
      for (const stream of [names.commandStream, names.eventStream, names.deadLetterStream]) {
        await jsm.streams.delete(stream).catch(() => undefined);
      }
      await nc.close();
      for (const c of connections) await c.close().catch(() => undefined);
      await db.drop();
    },
  };
}
