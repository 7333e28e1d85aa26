import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { SignJWT } from "jose";
import { jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@steward/contract";
import { connectNats } from "@steward/platform";
import { natsUrl } from "./databases";
import { repoRoot } from "./paths";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const launcher = require(join(repoRoot, "infra", "local", "launcher.cjs")) as {
  startPlatform(env: Record<string, string>, options?: { logDir?: string; perService?: Record<string, Record<string, string>> }): Promise<RunningPlatform>;
};

export interface RunningService {
  child: ChildProcess;
  /** The service's ready log line (its bound address is `addr`). */
  ready: { addr?: string };
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

export interface BenchPlatform {
  readonly gatewayUrl: string;
  readonly namespace: string;
  readonly env: Readonly<Record<string, string>>;
  /** The live services; the runner may be stopped before the gateway phase. */
  readonly services: RunningPlatform["services"];
  token(user: string): Promise<string>;
  /** Services that have exited on their own (crashed) so far, with how they ended. */
  crashed(): Array<{ service: string; code: number | null; signal: string | null }>;
  stopRunner(): Promise<void>;
  stop(): Promise<void>;
}

export interface PlatformOptions {
  readonly databaseUrl: string;
  readonly namespace: string;
  readonly modelUrl: string;
  readonly runnerConcurrency: number;
  /** A folder for --cpu-prof output of every service, or none. */
  readonly profileDir?: string;
  readonly logDir?: string;
  /** Node options added to every service's NODE_OPTIONS (the soak's heap flags and preloads). */
  readonly nodeOptions?: string;
  /**
   * Node options for the runner alone (heap sizing), added to the runner's NODE_OPTIONS.
   */
  readonly runnerNodeOptions?: string;
  /** More environment for every service (e.g. a preload's settings). */
  readonly extraEnv?: Readonly<Record<string, string>>;
}

/** The four built services as real processes (infra/local/launcher.cjs), pointed at the scripted model. */
export async function startBenchPlatform(options: PlatformOptions): Promise<BenchPlatform> {
  const secret = randomBytes(32).toString("base64url");
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    NATS_URL: natsUrl,
    STEWARD_ENV: "test",
    STEWARD_TEST_HOOKS: "1", // the test tools (test_counter)
    STEWARD_NATS_NAMESPACE: options.namespace,
    STEWARD_JWT_SECRET: secret,
    LLM_BASE_URL: options.modelUrl,
    LLM_API_KEY: "bench",
    LLM_MODEL: "scripted-bench",
    RUNNER_CONCURRENCY: String(options.runnerConcurrency),
    // One tenant runs every measured run: fair share across tenants stays on, with room for all of them.
    RUNNER_TENANT_MAX_RUNNING: "100000",
    // One user floods the gateway on purpose: the rate limits stay on (their cost is measured) but never refuse.
    GATEWAY_RATE_LIMIT_PER_USER: "1000000000",
    GATEWAY_RATE_LIMIT_PER_TENANT: "1000000000",
    GATEWAY_RATE_LIMIT_RUNS_PER_USER: "1000000000",
    GATEWAY_RATE_LIMIT_RUNS_PER_TENANT: "1000000000",
    ...options.extraEnv,
  };
  const nodeOptions = [process.env.NODE_OPTIONS ?? "", options.nodeOptions ?? ""];
  if (options.profileDir) {
    mkdirSync(options.profileDir, { recursive: true });
    // Node 20 refuses --cpu-prof in NODE_OPTIONS; a preload starts the same V8 profiler instead.
    nodeOptions.push(`--require ${join(__dirname, "cpu-prof-preload.js")}`);
    env.BENCH_CPU_PROF_DIR = options.profileDir;
  }
  const joined = nodeOptions.filter(Boolean).join(" ").trim();
  if (joined) env.NODE_OPTIONS = joined;
  if (options.logDir) mkdirSync(options.logDir, { recursive: true });
  // The runner's own Node options ride on top of everyone's (the launcher adds `perService` to `env`).
  const perService: Record<string, Record<string, string>> = {};
  if (options.runnerNodeOptions) perService["agent-runner"] = { NODE_OPTIONS: `${env.NODE_OPTIONS ?? ""} ${options.runnerNodeOptions}`.trim() };
  const running = await launcher.startPlatform(env, { logDir: options.logDir, perService });
  const key = new TextEncoder().encode(secret);
  let runnerStopped = false;
  return {
    gatewayUrl: running.gatewayUrl,
    namespace: options.namespace,
    env,
    services: running.services,
    token: (user) =>
      new SignJWT({ tid: "bench", roles: ["member"] }).setProtectedHeader({ alg: "HS256" }).setSubject(user).setIssuedAt().setExpirationTime("2h").sign(key),
    crashed() {
      return Object.entries(running.services)
        .filter(([name, s]) => !(name === "runner" && runnerStopped) && (s.child.exitCode !== null || s.child.signalCode !== null))
        .map(([service, s]) => ({ service, code: s.child.exitCode, signal: s.child.signalCode }));
    },
    async stopRunner() {
      if (runnerStopped) return;
      runnerStopped = true;
      await running.services.runner.stop();
    },
    stop: () => running.stop(),
  };
}

/** Deletes the namespace's streams (Steward's three and the floor's). */
export async function deleteStreams(namespace: string, extra: string[] = []): Promise<void> {
  const nc = await connectNats(natsUrl, "steward-bench-cleanup");
  try {
    const jsm = await jetstreamManager(nc);
    const names = busNames(namespace);
    for (const stream of [names.commandStream, names.eventStream, names.deadLetterStream, ...extra]) {
      await jsm.streams.delete(stream).catch(() => undefined);
    }
  } finally {
    await nc.close();
  }
}
