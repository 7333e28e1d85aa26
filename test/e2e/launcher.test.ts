import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@steward/contract";
import { connectNats } from "@steward/platform";
import { freshDatabase, freshNamespace, natsUrl } from "../support/databases";
import { waitFor } from "../support/wait-for";

// `npm start` as a user runs it (infra/local/start.mjs, already built), on a fresh database, NATS namespace,
// Steward home and free ports: what it says, what it restarts, and what it leaves behind.

jest.setTimeout(240_000);

const root = join(__dirname, "..", "..");
const BANNER = "Steward is running.";

interface Launcher {
  child: ChildProcess;
  home: string;
  /** stdout (the banner) and stderr (`steward: ...` lines), line by line. */
  out: string[];
  err: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every service pid seen, from the launcher's lines and from `ps --ppid`. */
  pids: Set<number>;
}

const launchers: Launcher[] = [];

function collectLines(stream: NodeJS.ReadableStream, into: string[]): void {
  let buffered = "";
  stream.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    into.push(...parts);
  });
}

function launch(env: Record<string, string>): Launcher {
  const home = mkdtempSync(join(tmpdir(), "steward-launcher-"));
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(LLM_|STEWARD_|HEALTH_|RUNNER_|GATEWAY_|POLICY_|TOOL_EXEC_|DATASET_|MCP_)/.test(k)),
  );
  const child = spawn(process.execPath, [join(root, "infra", "local", "start.mjs")], {
    cwd: root,
    // The scripted model is a test hook outside development (STEWARD_TEST_HOOKS).
    env: { ...inherited, STEWARD_HOME: home, STEWARD_SKIP_BUILD: "1", STEWARD_ENV: "test", STEWARD_TEST_HOOKS: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const launcher: Launcher = {
    child,
    home,
    out: [],
    err: [],
    // "close", not "exit": by then every line it wrote has been read.
    exited: new Promise((resolve) => child.once("close", (code, signal) => resolve({ code, signal }))),
    pids: new Set(),
  };
  collectLines(child.stdout!, launcher.out);
  collectLines(child.stderr!, launcher.err);
  launchers.push(launcher);
  return launcher;
}

/** `steward: gateway is listening (pid 123): http://…` lines, in order. */
function listening(l: Launcher): Array<{ service: string; pid: number; where: string; index: number }> {
  return l.err.flatMap((line, index) => {
    const m = /^steward: (\S+) is listening \(pid (\d+)\)(?:: (.*))?$/.exec(line);
    return m ? [{ service: m[1], pid: Number(m[2]), where: m[3] ?? "", index }] : [];
  });
}

/** `steward: policy (pid 123) exited with code 1 …` / `… was killed by SIGKILL …` lines, in order. */
function deaths(l: Launcher): Array<{ service: string; pid: number; line: string; index: number }> {
  return l.err.flatMap((line, index) => {
    const m = /^steward: (\S+) \(pid (\d+)\) (?:exited with code|was killed by|did not log)/.exec(line);
    return m ? [{ service: m[1], pid: Number(m[2]), line, index }] : [];
  });
}

/** The pid each service runs as now, by the launcher's latest `is listening` line. */
function current(l: Launcher): Map<string, number> {
  const latest = new Map<string, number>();
  for (const s of listening(l)) latest.set(s.service, s.pid);
  return latest;
}

function childrenOf(pid: number): Promise<number[]> {
  return new Promise((resolve) => {
    // ps exits 1 when there is no such process: no children.
    execFile("ps", ["--ppid", String(pid), "-o", "pid="], (_err, stdout) =>
      resolve(
        stdout
          .split("\n")
          .map((s) => Number(s.trim()))
          .filter((n) => n > 0),
      ),
    );
  });
}

/** True while the process exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.charAt(stat.lastIndexOf(")") + 2) !== "Z";
  } catch {
    return false;
  }
}

async function readyzStatus(url: string): Promise<number> {
  const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.status;
}

async function exitWithin(l: Launcher, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the launcher did not exit within ${timeoutMs} ms:\n${l.err.slice(-20).join("\n")}`)), timeoutMs);
  });
  try {
    return await Promise.race([l.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Records every pid the launcher named or that is its child right now. */
async function notePids(l: Launcher): Promise<void> {
  for (const s of listening(l)) l.pids.add(s.pid);
  for (const d of deaths(l)) l.pids.add(d.pid);
  if (l.child.pid && alive(l.child.pid)) for (const pid of await childrenOf(l.child.pid)) l.pids.add(pid);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Something else listening on a port: a service that needs it cannot start. */
function occupy(): Promise<{ port: number; server: Server }> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve({ port: (server.address() as { port: number }).port, server }));
  });
}

const tail = (l: Launcher) => `\nlauncher stderr:\n${l.err.slice(-30).join("\n")}`;

describe("npm start supervises its services and leaves nothing behind", () => {
  let db: { url: string; drop(): Promise<void> };
  const namespace = freshNamespace("l");
  let baseEnv: Record<string, string>;

  beforeAll(async () => {
    db = await freshDatabase("steward_launcher");
    baseEnv = {
      DATABASE_URL: db.url,
      NATS_URL: natsUrl,
      STEWARD_NATS_NAMESPACE: namespace,
      STEWARD_JWT_SECRET: randomBytes(32).toString("base64url"),
      GATEWAY_PORT: "0",
      HEALTH_PORT: "0",
      PG_POOL_MAX: "4",
    };
  });

  afterAll(async () => {
    for (const l of launchers) {
      if (l.child.exitCode === null && l.child.signalCode === null) {
        await notePids(l);
        l.child.kill("SIGKILL");
      }
      for (const pid of l.pids) if (alive(pid)) process.kill(pid, "SIGKILL");
      rmSync(l.home, { recursive: true, force: true });
    }
    const nc = await connectNats(natsUrl, "steward-e2e-launcher-cleanup");
    const jsm = await jetstreamManager(nc);
    const names = busNames(namespace);
    for (const stream of [names.commandStream, names.eventStream, names.deadLetterStream]) {
      await jsm.streams.delete(stream).catch(() => undefined);
    }
    await nc.close();
    await db?.drop();
  });

  test("no banner while a service is down; a killed service comes back on its address; SIGTERM stops every child", async () => {
    const blocker = await occupy();
    const l = launch({
      ...baseEnv,
      POLICY_ADDR: `127.0.0.1:${blocker.port}`,
      TOOL_EXEC_ADDR: `127.0.0.1:${await freePort()}`,
    });

    // policy cannot bind its port: the launcher says so at every attempt, keeps trying, and never claims
    // to be running.
    await waitFor(() => (deaths(l).filter((d) => d.service === "policy").length >= 2 ? true : undefined), {
      timeoutMs: 90_000,
      what: `two failed starts of policy${tail(l)}`,
    });
    const policyFailures = deaths(l).filter((d) => d.service === "policy");
    expect(policyFailures[0].line).toMatch(/restart attempt 1 in 0\.5 s/);
    expect(policyFailures[1].line).toMatch(/restart attempt 2 in 1 s/);
    expect(l.out.join("\n")).not.toContain(BANNER);
    expect(listening(l).map((s) => s.service)).not.toContain("gateway");

    // Once the port is free, policy starts at its next attempt, then the rest, then the banner.
    await new Promise<void>((resolve) => blocker.server.close(() => resolve()));
    await waitFor(() => (l.out.includes(BANNER) ? true : undefined), { timeoutMs: 120_000, what: `the ready banner${tail(l)}` });
    await notePids(l);
    const gatewayUrl = /^\s+gateway\s+(http:\/\/\S+)/m.exec(l.out.join("\n"))?.[1];
    expect(gatewayUrl).toBeDefined();
    expect(await readyzStatus(gatewayUrl!)).toBe(200);
    for (const s of listening(l)) {
      const health = /health (http:\/\/\S+)/.exec(s.where)?.[1];
      if (health) expect(await readyzStatus(health)).toBe(200);
    }
    // The launcher's children are exactly the four services it named.
    const named = [...current(l).values()].sort();
    expect(named).toHaveLength(4);
    await waitFor(
      async () => {
        const children = (await childrenOf(l.child.pid!)).sort();
        return JSON.stringify(children) === JSON.stringify(named) ? true : undefined;
      },
      { timeoutMs: 10_000, what: "the launcher's children to be the four services it named" },
    );

    // kill -9 the gateway: the launcher says so, the platform is degraded, and the gateway comes back on
    // the same URL; only then is the platform whole again. The banner is not printed a second time.
    const killed = current(l).get("gateway")!;
    const before = listening(l)
      .filter((s) => s.service === "gateway")
      .pop()!;
    process.kill(killed, "SIGKILL");
    const death = await waitFor(() => deaths(l).find((d) => d.pid === killed), { timeoutMs: 10_000, what: `the launcher to report the kill${tail(l)}` });
    expect(death.line).toMatch(/^steward: gateway \(pid \d+\) was killed by SIGKILL after .*; Steward is degraded; restart attempt 1 in 0\.5 s/);
    const back = await waitFor(() => listening(l).find((s) => s.service === "gateway" && s.index > death.index), {
      timeoutMs: 60_000,
      what: `the gateway to listen again${tail(l)}`,
    });
    expect(back.pid).not.toBe(killed);
    // The same API address and the same operator (health and metrics) port as before the kill.
    expect(back.where).toBe(before.where);
    expect(back.where.startsWith(`${gatewayUrl}, health http://`)).toBe(true);
    const whole = await waitFor(
      () => {
        const index = l.err.findIndex((line, i) => i > death.index && /Steward is whole/.test(line));
        return index >= 0 ? index : undefined;
      },
      { timeoutMs: 60_000, what: `the launcher to say the platform is whole again${tail(l)}` },
    );
    const gatewayReady = l.err.findIndex((line, i) => i > back.index && line === "steward: gateway is ready");
    expect(gatewayReady).toBeGreaterThan(back.index);
    expect(whole).toBeGreaterThan(gatewayReady);
    expect(await readyzStatus(gatewayUrl!)).toBe(200);
    expect(l.out.filter((line) => line === BANNER)).toHaveLength(1);
    await notePids(l);
    expect(l.pids.size).toBeGreaterThanOrEqual(4 + 1 + policyFailures.length);

    // SIGTERM: every service stops, the launcher exits 0 and forgets them; no process it started remains.
    l.child.kill("SIGTERM");
    const exit = await exitWithin(l, 30_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(l.err.some((line) => /^steward: received SIGTERM: stopping/.test(line))).toBe(true);
    expect(l.err[l.err.length - 1]).toMatch(/^steward: stopped/);
    await waitFor(() => ([...l.pids].every((pid) => !alive(pid)) ? true : undefined), {
      timeoutMs: 15_000,
      what: `every process the launcher started to be gone: ${[...l.pids].filter(alive).join(", ")}`,
    });
    expect(existsSync(join(l.home, "run", "services.json"))).toBe(false);
    expect(existsSync(join(l.home, "run", "launcher.json"))).toBe(false);
  });

  test("SIGTERM while a restart is pending stops the launcher at once, and no restart follows", async () => {
    const blocker = await occupy();
    try {
      const l = launch({ ...baseEnv, POLICY_ADDR: `127.0.0.1:${blocker.port}`, TOOL_EXEC_ADDR: "127.0.0.1:0" });
      // The third failure schedules the next attempt 2 s later: SIGTERM lands while it is pending.
      const third = await waitFor(() => deaths(l).filter((d) => d.service === "policy")[2], {
        timeoutMs: 90_000,
        what: `three failed starts of policy${tail(l)}`,
      });
      l.child.kill("SIGTERM");
      expect(third.line).toMatch(/restart attempt 3 in 2 s/);
      const exit = await exitWithin(l, 15_000);
      expect(exit).toEqual({ code: 0, signal: null });
      await notePids(l);
      const afterStop = l.err.slice(l.err.findIndex((line) => /received SIGTERM/.test(line)));
      expect(afterStop.some((line) => /is listening|exited with code|was killed by/.test(line))).toBe(false);
      expect(l.out.join("\n")).not.toContain(BANNER);
      expect([...l.pids].filter(alive)).toEqual([]);
    } finally {
      blocker.server.close();
    }
  });

  test("npm run stop stops the services a killed launcher left behind", async () => {
    const l = launch({ ...baseEnv, POLICY_ADDR: "127.0.0.1:0", TOOL_EXEC_ADDR: "127.0.0.1:0" });
    await waitFor(() => (l.out.includes(BANNER) ? true : undefined), { timeoutMs: 120_000, what: `the ready banner${tail(l)}` });
    await notePids(l);
    const services = [...current(l).values()];
    expect(services).toHaveLength(4);

    // A launcher killed outright cannot stop anything: its services outlive it, recorded under its home.
    l.child.kill("SIGKILL");
    await exitWithin(l, 10_000);
    const run = (args: string[] = []) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [join(root, "infra", "local", "stop.mjs"), ...args],
          {
            cwd: root,
            env: { ...process.env, STEWARD_HOME: l.home },
            timeout: 60_000,
          },
          (_err, stdout, stderr) => resolve({ code: child.exitCode, output: `${stdout}${stderr}` }),
        );
      });
    const stillUp = services.filter(alive);
    expect(stillUp.length).toBeGreaterThan(0);
    const stop = await run();
    expect(stop.code).toBe(0);
    for (const pid of stillUp) expect(stop.output).toContain(`(pid ${pid}), left running by an npm start that is gone`);
    await waitFor(() => ([...l.pids].every((pid) => !alive(pid)) ? true : undefined), {
      timeoutMs: 15_000,
      what: `every service to be gone: ${[...l.pids].filter(alive).join(", ")}`,
    });
    const again = await run();
    expect(again.output).toContain("nothing of Steward's was running");
  });
});
