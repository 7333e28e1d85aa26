import { randomBytes } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { SignJWT } from "jose";
import { jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@steward/contract";
import { startFakeOpenAi, type FakeOpenAi } from "../fake-openai";
import { counterInput, counterModel } from "../counter-runs";
import { callGateway } from "../gateway-http";
import { waitFor } from "../wait-for";
import { checkPool, type FaultCluster } from "./fault-cluster";
import { freePort } from "./free-port";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const launcher = require("../../../infra/local/launcher.cjs") as {
  startService(
    service: string,
    env: Record<string, string>,
    options?: { readyMsg?: string; timeoutMs?: number; logFile?: string },
  ): Promise<{
    child: ChildProcess;
    lines: string[];
    ready: Record<string, unknown>;
    whenReady(options?: { timeoutMs?: number }): Promise<void>;
    stop(): Promise<void>;
  }>;
};

/** How long a started service may take to answer /readyz with 200. */
const READY_TIMEOUT_MS = 60_000;

export type ServiceName = "policy" | "tool-exec" | "agent-runner" | "gateway";
export const dependencyOrder: readonly ServiceName[] = ["policy", "tool-exec", "agent-runner", "gateway"];
export const reverseOrder: readonly ServiceName[] = [...dependencyOrder].reverse();

/** One process of a service, as started by the suite. */
export interface ServiceProcess {
  readonly service: ServiceName | "agent-runner-2";
  readonly pid: number;
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly logFile: string;
  /** The line the service logged when its ports were bound ("listening"). */
  readonly ready: Record<string, unknown>;
  /** Resolves once the service's /readyz answers 200; rejects if it exits first or does not within a minute. */
  whenReady(): Promise<void>;
  /** Set once the process is gone. */
  exit?: { code: number | null; signal: string | null; at: number; expected: boolean };
}

export interface FaultPlatformOptions {
  /** Tool steps per run (test_counter calls, one per model step). Default 3. */
  toolSteps?: number;
  /** Environment for every service, on top of the suite's. */
  env?: Record<string, string>;
}

export interface FaultPlatform {
  readonly namespace: string;
  readonly databaseName: string;
  readonly gatewayUrl: string;
  readonly toolSteps: number;
  /** A pool straight to the private server (not through the proxy). */
  readonly pool: pg.Pool;
  /** The live process of each service (replaced when a service is started again). */
  readonly current: Record<ServiceName, ServiceProcess>;
  /** Every process started, in start order. */
  readonly processes: ServiceProcess[];
  token(): Promise<string>;
  http(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Creates `count` counter runs (tags `<prefix>-<i>`) whose tool calls each take `delayMs`; resolves with their ids. */
  submitRuns(prefix: string, count: number, delayMs: number): Promise<string[]>;
  /** SIGKILL to the live process of `service`; resolves once it is gone. */
  kill9(service: ServiceName): Promise<void>;
  /** Starts `service` again, on the same address; resolves when it is ready. */
  restart(service: ServiceName): Promise<ServiceProcess>;
  /** Stops every service (SIGTERM, SIGKILL after the launcher's grace), expected. */
  stopAll(): Promise<void>;
  /**
   * Starts the services in `order`, each one as soon as the one before is listening (its ports bound), so a
   * service may start before what it depends on; then waits until every one is ready.
   */
  startInOrder(order: readonly ServiceName[]): Promise<void>;
  /** Starts another agent-runner on the same database, bus and tool-exec. */
  startSecondRunner(env?: Record<string, string>): Promise<ServiceProcess>;
  /** Waits (bounded) until the gateway answers /readyz with 200. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** Processes that ended without the suite asking. */
  unexpectedExits(): ServiceProcess[];
  /** Where every process's log (stdout and stderr) is written; removed at teardown unless kept. */
  readonly logDir: string;
  /** Keeps the logs after teardown (for a failed test). */
  keepLogs(): void;
  /** The last lines of a process's log (stdout and stderr). */
  logTail(p: ServiceProcess, lines?: number): string;
  teardown(): Promise<void>;
}

const MODEL = { LLM_API_KEY: "sk-test", LLM_MODEL: "fake-model" };

/** Steward's four services as real processes on a fault cluster's database and NATS (both through the proxies). */
export async function startFaultPlatform(cluster: FaultCluster, options: FaultPlatformOptions = {}): Promise<FaultPlatform> {
  const toolSteps = options.toolSteps ?? 3;
  const counter = counterModel(toolSteps);
  const model: FakeOpenAi = await startFakeOpenAi(counter.script);
  const db = await cluster.freshDatabase();
  const pool = checkPool(db.directUrl);
  const namespace = `f${randomBytes(5).toString("hex")}`;
  const secret = randomBytes(32).toString("base64url");
  const logDir = mkdtempSync(join(tmpdir(), "steward-fault-logs-"));
  const [policyPort, toolExecPort, gatewayPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const policyAddr = `127.0.0.1:${policyPort}`;
  const toolExecAddr = `127.0.0.1:${toolExecPort}`;
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    NATS_URL: cluster.servicesNatsUrl,
    STEWARD_ENV: "test",
    STEWARD_TEST_HOOKS: "1", // the test tools (test_counter)
    STEWARD_NATS_NAMESPACE: namespace,
    STEWARD_JWT_SECRET: secret,
    LOG_LEVEL: process.env.FAULT_LOG_LEVEL ?? "info",
    LLM_BASE_URL: model.baseUrl,
    ...MODEL,
    POLICY_ADDR: policyAddr,
    TOOL_EXEC_ADDR: toolExecAddr,
    GATEWAY_PORT: String(gatewayPort),
    // The faults hit 30+ runs of one tenant in flight: fair share must leave room for all of them.
    RUNNER_TENANT_MAX_RUNNING: "1000",
    ...options.env,
  };
  const processes: ServiceProcess[] = [];
  const current = {} as Record<ServiceName, ServiceProcess>;
  const expectedExit = new Set<ChildProcess>();
  let starts = 0;

  function track(service: ServiceProcess["service"], started: Awaited<ReturnType<typeof launcher.startService>>, logFile: string): ServiceProcess {
    const p: ServiceProcess = {
      service,
      pid: started.child.pid!,
      child: started.child,
      lines: started.lines,
      logFile,
      ready: started.ready,
      whenReady: () => started.whenReady({ timeoutMs: READY_TIMEOUT_MS }),
    };
    processes.push(p);
    const onExit = (code: number | null, signal: string | null) => {
      p.exit = { code, signal, at: Date.now(), expected: expectedExit.has(started.child) };
    };
    if (started.child.exitCode !== null || started.child.signalCode !== null) onExit(started.child.exitCode, started.child.signalCode);
    else started.child.once("exit", onExit);
    return p;
  }

  /** Spawns `service`; the promise settles when it logs "listening" (its ports bound, dependencies not yet needed). */
  function spawnService(service: ServiceName | "agent-runner-2", extra: Record<string, string> = {}) {
    starts += 1;
    const logFile = join(logDir, `${String(starts).padStart(2, "0")}-${service}.log`);
    const entry = service === "agent-runner-2" ? "agent-runner" : service;
    return launcher.startService(entry, { ...env, ...extra }, { logFile, timeoutMs: 60_000 }).then((started) => track(service, started, logFile));
  }

  async function start(service: ServiceName): Promise<ServiceProcess> {
    const p = await spawnService(service);
    current[service] = p;
    return p;
  }

  async function stopProcess(p: ServiceProcess | undefined): Promise<void> {
    if (!p || p.exit) return;
    expectedExit.add(p.child);
    const gone = new Promise<void>((resolve) => p.child.once("exit", () => resolve()));
    p.child.kill("SIGTERM");
    const timer = setTimeout(() => p.child.kill("SIGKILL"), 5000);
    await gone;
    clearTimeout(timer);
  }

  let token: string | null = null;
  let keepLogs = Boolean(process.env.FAULT_KEEP_LOGS);
  const self: FaultPlatform = {
    namespace,
    databaseName: db.name,
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    toolSteps,
    pool,
    current,
    processes,
    async token() {
      token ??= await new SignJWT({ tid: "faultco", roles: ["member"] })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("ops")
        .setIssuedAt()
        .setExpirationTime("1h")
        .sign(new TextEncoder().encode(secret));
      return token;
    },
    async http(method, path, body) {
      return callGateway(self.gatewayUrl, await self.token(), method, path, body);
    },
    async submitRuns(prefix, count, delayMs) {
      // One after another, as a client would: the first runs start while the last are being created.
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const created = await self.http("POST", "/v1/agents/runs", { input: counterInput(`${prefix}-${i}`, delayMs) });
        if (created.status !== 201) throw new Error(`setup: run ${i} was not created: ${created.status} ${JSON.stringify(created.body)}`);
        ids.push(created.body.id as string);
      }
      return ids;
    },
    async kill9(service) {
      const p = current[service];
      if (p.exit) return;
      expectedExit.add(p.child);
      const gone = new Promise<void>((resolve) => p.child.once("exit", () => resolve()));
      p.child.kill("SIGKILL");
      await gone;
    },
    async restart(service) {
      const p = await start(service);
      await p.whenReady();
      return p;
    },
    async stopAll() {
      for (const service of [...dependencyOrder].reverse()) await stopProcess(current[service]);
    },
    async startInOrder(order) {
      const started: ServiceProcess[] = [];
      for (const service of order) started.push(await start(service));
      await Promise.all(started.map((p) => p.whenReady()));
    },
    async startSecondRunner(extra = {}) {
      const p = await spawnService("agent-runner-2", extra);
      await p.whenReady();
      return p;
    },
    async waitReady(timeoutMs = 60_000) {
      await waitFor(
        async () => {
          const res = await fetch(`${self.gatewayUrl}/readyz`);
          return res.status === 200 ? true : undefined;
        },
        { timeoutMs, intervalMs: 100, what: "the gateway to answer /readyz with 200" },
      );
    },
    logDir,
    keepLogs: () => {
      keepLogs = true;
    },
    unexpectedExits: () => processes.filter((p) => p.exit && !p.exit.expected),
    logTail(p, lines = 20) {
      try {
        return readFileSync(p.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
      } catch {
        return "(no log)";
      }
    },
    async teardown() {
      for (const p of [...processes].reverse()) await stopProcess(p).catch(() => undefined);
      await pool.end().catch(() => undefined);
      await model.close().catch(() => undefined);
      const nc = await cluster.connectNats().catch(() => null);
      if (nc) {
        const jsm = await jetstreamManager(nc).catch(() => null);
        const names = busNames(namespace);
        for (const stream of [names.commandStream, names.eventStream, names.deadLetterStream]) {
          await jsm?.streams.delete(stream).catch(() => undefined);
        }
        await nc.close().catch(() => undefined);
      }
      if (!keepLogs) rmSync(logDir, { recursive: true, force: true });
    },
  };
  try {
    await self.startInOrder(dependencyOrder);
    await self.waitReady();
  } catch (err) {
    await self.teardown();
    throw err;
  }
  return self;
}
