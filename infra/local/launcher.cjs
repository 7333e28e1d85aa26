// Starts Steward's four services as child processes. Shared by `npm start` (through supervisor.mjs) and the
// multi-service test suite, so both run the platform the same way.
//
// The protocol a service follows: it logs `{"msg":"listening", addr?, health}` (pino JSON on stdout) once its
// ports are bound, before its dependencies are up; `GET <health>/readyz` then answers 200 once it serves.
// A service that logs no `health` (the protocol's older form) counts as ready from the line it resolved on.
"use strict";
const { spawn } = require("node:child_process");
const { join } = require("node:path");
const { createWriteStream } = require("node:fs");

const root = join(__dirname, "..", "..");

/** The entry point of a built service. */
function entryOf(service) {
  return join(root, "services", service, "dist", "main.js");
}

/** Children spawned in a process group of their own: stopped and killed as a group. */
const grouped = new WeakSet();

function alive(child) {
  return child.exitCode === null && child.signalCode === null;
}

/** Sends `signal` to the child, or to its whole group when it leads one; a process already gone is no error. */
function signalChild(child, signal) {
  try {
    if (grouped.has(child)) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    // already gone
  }
}

/**
 * One readiness probe: `GET <health>/readyz` (2 s timeout). Resolves `{ready, reasons}`; never rejects.
 * Without a health URL there is nothing to ask, and the service counts as ready.
 */
async function probeReady(health) {
  if (!health) return { ready: true, reasons: [] };
  try {
    const res = await fetch(`${health}/readyz`, { signal: AbortSignal.timeout(2000) });
    const body = await res.json().catch(() => ({}));
    if (res.status === 200) return { ready: true, reasons: [] };
    const reasons = Array.isArray(body.reasons) && body.reasons.length > 0 ? body.reasons.map(String) : [`/readyz answered ${res.status}`];
    return { ready: false, reasons };
  } catch (err) {
    return { ready: false, reasons: [`/readyz did not answer (${err?.cause?.code ?? err?.name ?? String(err)})`] };
  }
}

/**
 * Spawns one service and resolves once it logs `readyMsg` (a pino `msg`; default "listening", which also
 * accepts "ready" from a service that logs no "listening"), with that line parsed as `ready`.
 * Rejects if the process exits first (`err.exit = {code, signal}`) or `timeoutMs` passes (the child is then
 * killed). Options: `logFile` (stdout and stderr appended), `detached` (a process group of its own, which
 * `stop()` and a SIGKILL then reach entirely), `onSpawn(child)` (called at once, to stop a start in flight).
 * Callers run many services side by side: unless `env` names HEALTH_PORT (undefined = the service's own
 * default), the service picks a free health port.
 */
/**
 * Node flags per service. The runner's heap is sized deliberately: its live heap is ~30–40 MB, and with
 * Node's default limit (4 GB here) V8 lets RSS swing between ~140 and 300 MB before it collects; 512 MB
 * keeps RSS flat (docs/performance.md, "Soak (memory)") with room for long conversations. Any other way of starting
 * the runner (an image, a unit file) must pass the same (NODE_OPTIONS=--max-old-space-size=512).
 */
const nodeFlags = { "agent-runner": ["--max-old-space-size=512"] };

/**
 * Variables only one service may receive (SPEC §10: the JWT secret only the gateway, model keys only the
 * runner): the gateway verifies tokens, only the runner talks to a model, only tool-exec reads the datasets and
 * mounts MCP servers (whose settings may carry tokens).
 */
const onlyFor = [
  [/^STEWARD_JWT_/, "gateway"],
  [/^LLM_/, "agent-runner"],
  [/^(DATASETS|DATASET_URL|MCP_SERVERS)$/, "tool-exec"],
];
/** A name that looks like a secret and is not listed above (a token in the caller's shell): no service gets it. */
const secretLike = /(SECRET|PASSWORD|PASSWD|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL|_CREDS$)/i;
/** Each service's own credentials, given to it by whoever starts it (never inherited from this process). */
const ownCredentials = /^(NATS_USER|NATS_PASSWORD|STEWARD_TLS_(CA|CERT|KEY))$/;

/**
 * The environment a service is started with: `inherited` (this process's) overlaid with `given` (what the
 * caller passes for this service; undefined removes a variable). A variable reserved for another service is
 * dropped from both; a secret-looking one or a credential is taken only from `given`, never inherited.
 */
function scopeEnv(service, inherited, given) {
  const out = {};
  const consider = (source, fromCaller) => {
    for (const [k, v] of Object.entries(source)) {
      if (v === undefined) {
        delete out[k];
        continue;
      }
      const owner = onlyFor.find(([re]) => re.test(k))?.[1];
      if (owner !== undefined && owner !== service) continue;
      if (owner === undefined && !fromCaller && (secretLike.test(k) || ownCredentials.test(k))) continue;
      out[k] = v;
    }
  };
  consider(inherited, false);
  consider(given, true);
  return out;
}

function startService(service, env, { readyMsg = "listening", timeoutMs = 60_000, logFile, detached = false, onSpawn } = {}) {
  const accepted = readyMsg === "listening" ? ["listening", "ready"] : [readyMsg];
  const childEnv = scopeEnv(service, process.env, { HEALTH_PORT: "0", ...env });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(nodeFlags[service] ?? []), entryOf(service)], { env: childEnv, stdio: ["ignore", "pipe", "pipe"], detached });
    if (detached) grouped.add(child);
    const startedAt = Date.now();
    const exited = new Promise((res) => child.once("exit", (code, signal) => res({ code, signal })));
    onSpawn?.(child);
    const sink = logFile ? createWriteStream(logFile, { flags: "a" }) : null;
    const lines = [];
    let buffered = "";
    let stderr = "";
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`${service} did not log "${readyMsg}" within ${timeoutMs} ms`)), timeoutMs);
    function fail(err) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signalChild(child, "SIGKILL");
      err.service = service;
      err.pid = child.pid;
      err.stderrTail = stderr.trim().split("\n").slice(-1)[0] ?? "";
      err.message += `\n${service} stderr:\n${stderr.slice(-4000)}\n${service} log tail:\n${lines.slice(-20).join("\n")}`;
      reject(err);
    }
    child.stdout.on("data", (chunk) => {
      sink?.write(chunk);
      buffered += chunk.toString("utf8");
      let nl;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        lines.push(line);
        if (lines.length > 2000) lines.shift();
        if (settled) continue;
        let parsed;
        try {
          parsed = JSON.parse(line);
        } catch {
          continue; // not a log line
        }
        if (!accepted.includes(parsed?.msg)) continue;
        settled = true;
        clearTimeout(timer);
        const health = typeof parsed.health === "string" ? parsed.health.replace(/\/+$/, "") : undefined;
        resolve({
          service,
          child,
          pid: child.pid,
          startedAt,
          ready: parsed,
          health,
          lines,
          exited,
          probe: () => probeReady(health),
          whenReady: (options) => waitReady(service, child, health, options),
          stop: (graceMs) => stopChild(child, graceMs),
        });
      }
    });
    child.stderr.on("data", (chunk) => {
      sink?.write(chunk);
      stderr += chunk.toString("utf8");
      if (stderr.length > 64_000) stderr = stderr.slice(-16_000);
    });
    child.on("error", (err) => fail(new Error(`${service} could not be started: ${err.message}`)));
    child.on("exit", (code, signal) => {
      // Whatever the service started and left behind in its group goes with it.
      if (detached) signalChild(child, "SIGKILL");
      sink?.end();
      const err = new Error(`${service} exited (code ${code}, signal ${signal})`);
      err.exit = { code, signal };
      fail(err);
    });
  });
}

/**
 * Polls the service's /readyz until it answers 200; rejects when the process exits first or `timeoutMs`
 * passes, naming the last reasons it gave. Resolves at once for a service without a health URL.
 */
async function waitReady(service, child, health, { timeoutMs = 120_000, intervalMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = { ready: false, reasons: [] };
  while (alive(child)) {
    last = await probeReady(health);
    if (last.ready) return;
    if (Date.now() > deadline) {
      throw new Error(`${service} was not ready within ${timeoutMs} ms: ${last.reasons.join("; ") || "no reason given"}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`${service} exited (code ${child.exitCode}, signal ${child.signalCode}) before it was ready: ${last.reasons.join("; ")}`);
}

/** Asks a child to stop (SIGTERM) and waits for it; kills it (its group, if it leads one) after `graceMs`. */
function stopChild(child, graceMs = 5000) {
  if (!alive(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => signalChild(child, "SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** The port of `host:port` or of a URL. */
function portOf(address) {
  return Number(address.slice(address.lastIndexOf(":") + 1).replace(/\/.*$/, ""));
}

/**
 * The environment of one service, given what is known of the others: `policyAddr`, `toolExecAddr`
 * (host:port), `gatewayPort` and the service's own `healthPort` (0 = the service picks a free one;
 * undefined = the service's own default, whatever HEALTH_PORT this process has). `perService` adds each
 * service's own variables (its TLS files, NATS user, database role) to the shared `env`.
 */
function serviceEnv(service, shared, { policyAddr, toolExecAddr, gatewayPort, healthPort }, perService = {}) {
  const env = { ...shared, ...(perService[service] ?? {}) };
  const health = { HEALTH_PORT: healthPort === undefined ? undefined : String(healthPort) };
  switch (service) {
    case "policy":
      return { ...env, ...health, POLICY_ADDR: policyAddr };
    case "tool-exec":
      return { ...env, ...health, POLICY_ADDR: policyAddr, TOOL_EXEC_ADDR: toolExecAddr };
    case "agent-runner":
      return { ...env, ...health, TOOL_EXEC_ADDR: toolExecAddr };
    case "gateway":
      // Its API port answers /healthz and /readyz too; the health port is the operator's (and serves /metrics).
      // tool-exec's address for the catalogue only (MCP search_capabilities): the gateway never invokes a tool.
      return { ...env, ...health, POLICY_ADDR: policyAddr, TOOL_EXEC_ADDR: toolExecAddr, GATEWAY_PORT: String(gatewayPort) };
    default:
      throw new Error(`unknown service ${service}`);
  }
}

/**
 * Starts policy, tool-exec, agent-runner and gateway, then waits (bounded by `readyTimeoutMs`, default
 * 120 s) until each one's /readyz answers 200. They start in that order only to learn the gRPC addresses
 * (ports set to 0 are picked by the services and passed on); none waits for another to be ready. Resolves
 * with the running services and the gateway's URL; on failure, stops what it started and rejects.
 * `perService` (by service name) adds each one's own variables to `env`.
 */
async function startPlatform(env, { logDir, gatewayPort = 0, policyPort = 0, toolExecPort = 0, readyTimeoutMs = 120_000, perService = {} } = {}) {
  const started = [];
  const log = (s) => (logDir ? join(logDir, `${s}.log`) : undefined);
  try {
    const known = { policyAddr: `127.0.0.1:${policyPort}`, gatewayPort, healthPort: 0 };
    const policy = await startService("policy", serviceEnv("policy", env, known, perService), { logFile: log("policy") });
    started.push(policy);
    known.policyAddr = policy.ready.addr;
    known.toolExecAddr = `127.0.0.1:${toolExecPort}`;
    const toolExec = await startService("tool-exec", serviceEnv("tool-exec", env, known, perService), { logFile: log("tool-exec") });
    started.push(toolExec);
    known.toolExecAddr = toolExec.ready.addr;
    const runner = await startService("agent-runner", serviceEnv("agent-runner", env, known, perService), { logFile: log("agent-runner") });
    started.push(runner);
    const gateway = await startService("gateway", serviceEnv("gateway", env, known, perService), { logFile: log("gateway") });
    started.push(gateway);
    await Promise.all(started.map((s) => s.whenReady({ timeoutMs: readyTimeoutMs })));
    return {
      services: { policy, toolExec, runner, gateway },
      policyAddr: known.policyAddr,
      toolExecAddr: known.toolExecAddr,
      gatewayUrl: gateway.ready.addr,
      async stop() {
        for (const s of [...started].reverse()) await s.stop();
      },
    };
  } catch (err) {
    for (const s of started.reverse()) await s.stop();
    throw err;
  }
}

module.exports = { startService, startPlatform, stopChild, probeReady, serviceEnv, scopeEnv, portOf, entryOf, root };
