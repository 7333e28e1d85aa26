// Starts Steward's four services as child processes and waits until each says it is up. Shared by
// `npm start` and the multi-service test suite, so both run the platform the same way.
"use strict";
const { spawn } = require("node:child_process");
const { join } = require("node:path");
const { createWriteStream } = require("node:fs");

const root = join(__dirname, "..", "..");

/** The entry point of a built service. */
function entryOf(service) {
  return join(root, "services", service, "dist", "main.js");
}

/**
 * Spawns one service and resolves once it logs `readyMsg` (a pino `msg`), with that line parsed.
 * Rejects if the process exits first or `timeoutMs` passes; stderr is kept for the error.
 */
function startService(service, env, { readyMsg = "listening", timeoutMs = 60_000, logFile } = {}) {
  if (readyMsg === "listening" && service === "agent-runner") readyMsg = "ready";
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entryOf(service)], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const sink = logFile ? createWriteStream(logFile, { flags: "a" }) : null;
    const lines = [];
    let buffered = "";
    let stderr = "";
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`${service} did not become ready within ${timeoutMs} ms`)), timeoutMs);
    function fail(err) {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill("SIGKILL");
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
        try {
          const parsed = JSON.parse(line);
          if (parsed.msg === readyMsg) {
            settled = true;
            clearTimeout(timer);
            resolve({ service, child, ready: parsed, lines, stop: () => stopChild(child) });
          }
        } catch {
          // not a log line
        }
      }
    });
    child.stderr.on("data", (chunk) => {
      sink?.write(chunk);
      stderr += chunk.toString("utf8");
    });
    child.on("exit", (code, signal) => fail(new Error(`${service} exited (code ${code}, signal ${signal})`)));
  });
}

/** Asks a child to stop and waits for it; kills it if it has not exited within `graceMs`. */
function stopChild(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/**
 * Starts policy, tool-exec, agent-runner and gateway in dependency order. Ports set to 0 are picked by
 * the services and passed on. Resolves with the running services and the gateway's URL.
 */
async function startPlatform(env, { logDir, gatewayPort = 0, policyPort = 0, toolExecPort = 0 } = {}) {
  const started = [];
  const log = (s) => (logDir ? join(logDir, `${s}.log`) : undefined);
  try {
    const policy = await startService("policy", { ...env, POLICY_ADDR: `127.0.0.1:${policyPort}` }, { logFile: log("policy") });
    started.push(policy);
    const policyAddr = policy.ready.addr;
    const toolExec = await startService(
      "tool-exec",
      { ...env, POLICY_ADDR: policyAddr, TOOL_EXEC_ADDR: `127.0.0.1:${toolExecPort}` },
      { logFile: log("tool-exec") },
    );
    started.push(toolExec);
    const toolExecAddr = toolExec.ready.addr;
    const runner = await startService("agent-runner", { ...env, TOOL_EXEC_ADDR: toolExecAddr }, { readyMsg: "ready", logFile: log("agent-runner") });
    started.push(runner);
    const gateway = await startService(
      "gateway",
      { ...env, POLICY_ADDR: policyAddr, GATEWAY_PORT: String(gatewayPort) },
      { logFile: log("gateway") },
    );
    started.push(gateway);
    return {
      services: { policy, toolExec, runner, gateway },
      policyAddr,
      toolExecAddr,
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

module.exports = { startService, startPlatform, stopChild, entryOf, root };
