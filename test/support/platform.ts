import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { connectNats, grpcClientOptions, loadGrpcTls, type NatsConnection, type ServiceIdentity } from "@steward/platform";
import type { ClientOptions } from "@steward/proto";
import { jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@steward/contract";
import { checkAgainstOpenApi } from "./gateway-http";
import { freshDatabase, freshNamespace, loadDemoDataset, natsUrl } from "./databases";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const launcher = require("../../infra/local/launcher.cjs") as {
  startPlatform(env: Record<string, string>, options?: Record<string, unknown>): Promise<RunningPlatform>;
  startService(service: string, env: Record<string, string>, options?: { readyMsg?: string }): Promise<RunningService>;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensureDevPki } = require("../../infra/local/dev-pki.cjs") as {
  ensureDevPki(dir: string): { env: Record<string, Record<string, string>> };
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { enableServiceLogins } = require("../../infra/local/service-roles.cjs") as {
  enableServiceLogins(databaseUrl: string, passwords: Record<string, string>): Promise<Record<string, string>>;
};

export interface RunningService {
  child: ChildProcess;
  lines: string[];
  /** The service's health/ops URL from its "listening" line (its /healthz, /readyz and /metrics). */
  health?: string;
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
  /**
   * One request to the gateway. Every answer is checked against the gateway's OpenAPI document
   * (checkAgainstOpenApi): a route outside it must answer a 404 problem. `unchecked` names why a request's
   * answer is deliberately not held to the document (a transport-level refusal no route can describe).
   */
  http(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; unchecked?: string },
  ): Promise<{ status: number; headers: Headers; body: any }>;
  nats(): Promise<NatsConnection>;
  /** Starts one more agent-runner on the same database, bus and tool-exec; stopped at teardown. */
  startRunner(env?: Record<string, string>): Promise<RunningService>;
  /**
   * gRPC client options for calling `peer` as `identity` (that service's certificate), as the services
   * themselves do; without TLS (options.tls false), plain.
   */
  grpcOptions(identity: ServiceIdentity, peer: ServiceIdentity): ClientOptions;
  /** The files of each service's TLS identity (STEWARD_TLS_*), by service; empty without TLS. */
  tlsFiles: Record<string, Record<string, string>>;
  /** Each service's DATABASE_URL as its own role (options.roles), by service; empty otherwise. */
  roleUrls: Record<string, string>;
  teardown(): Promise<void>;
}

export interface TestPlatformOptions {
  /** Mutual TLS between the services, with a development CA of the platform's own. Default true. */
  tls?: boolean;
  /** A NATS server of the test's own (and the credentials the helpers use there) instead of the shared one. */
  nats?: { url: string; user?: string; pass?: string };
  /** Each service's own variables (its NATS user, say), by service name. */
  perService?: Record<string, Record<string, string>>;
  /** The NATS namespace (default: a fresh one). */
  namespace?: string;
  /**
   * Each service connects to PostgreSQL as its own role (migration 014), given LOGIN and a fresh password, as
   * `npm start` does; the test tools (which make a table of their own) need the owner. Default false.
   */
  roles?: boolean;
}

/**
 * The four services as real processes on a fresh database and NATS namespace, with mutual TLS on gRPC (as
 * outside development) unless `options.tls` is false.
 */
export async function startTestPlatform(extraEnv: Record<string, string> = {}, options: TestPlatformOptions = {}): Promise<TestPlatform> {
  const tlsDir = options.tls === false ? null : mkdtempSync(join(tmpdir(), "steward-e2e-tls-"));
  const tlsFiles = tlsDir ? ensureDevPki(tlsDir).env : {};
  const perService: Record<string, Record<string, string>> = {};
  for (const service of ["gateway", "agent-runner", "tool-exec", "policy"]) {
    perService[service] = { ...(tlsFiles[service] ?? {}), ...(options.perService?.[service] ?? {}) };
  }
  const bus = options.nats ?? { url: natsUrl };
  const db = await freshDatabase("steward_e2e");
  await loadDemoDataset(db.url);
  const namespace = options.namespace ?? freshNamespace("e");
  const roleUrls = options.roles
    ? await enableServiceLogins(db.url, Object.fromEntries(Object.keys(perService).map((s) => [s, randomBytes(18).toString("base64url")])))
    : {};
  for (const [service, url] of Object.entries(roleUrls)) perService[service] = { DATABASE_URL: url, ...perService[service] };
  const secret = randomBytes(32).toString("base64url");
  const env = {
    DATABASE_URL: db.url,
    NATS_URL: bus.url,
    STEWARD_ENV: "test",
    // Short deadlines, crash points, the test tools and the scripted model are test hooks: on for the suites.
    STEWARD_TEST_HOOKS: "1",
    STEWARD_NATS_NAMESPACE: namespace,
    STEWARD_JWT_SECRET: secret,
    LOG_LEVEL: "info",
    // Several suites may hold platforms at once; keep each one's share of PostgreSQL's connections small.
    PG_POOL_MAX: "4",
    // Health ports picked by each process: a suite may run several runners.
    HEALTH_PORT: "0",
    ...extraEnv,
  };
  const running = await launcher.startPlatform(env, { perService }).catch(async (err: unknown) => {
    await db.drop();
    if (tlsDir) rmSync(tlsDir, { recursive: true, force: true });
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
      new SignJWT({ tid: tenant, roles }).setProtectedHeader({ alg: "HS256" }).setSubject(user).setIssuedAt().setExpirationTime("1h").sign(key),
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
      if (!options.unchecked) {
        await checkAgainstOpenApi(running.gatewayUrl, {
          method,
          path,
          status: res.status,
          contentType: res.headers.get("content-type"),
          body: parsed,
          empty: text === "",
        });
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async nats() {
      const nc = await connectNats(bus.url, "steward-e2e", { user: bus.user, pass: bus.pass });
      connections.push(nc);
      return nc;
    },
    async startRunner(runnerEnv = {}) {
      const runner = await launcher.startService(
        "agent-runner",
        { ...env, ...perService["agent-runner"], TOOL_EXEC_ADDR: running.toolExecAddr, ...runnerEnv },
        { readyMsg: "ready" },
      );
      extraRunners.push(runner);
      return runner;
    },
    grpcOptions(identity, peer) {
      const tls = tlsDir ? loadGrpcTls({ STEWARD_ENV: "test", ...tlsFiles[identity] }, identity) : undefined;
      return grpcClientOptions(tls, peer);
    },
    tlsFiles,
    roleUrls,
    async teardown() {
      for (const r of extraRunners) await r.stop();
      await running.stop();
      if (tlsDir) rmSync(tlsDir, { recursive: true, force: true });
      const nc = await connectNats(bus.url, "steward-e2e-cleanup", { user: bus.user, pass: bus.pass });
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
