// Keeps the four services of `npm start` running, as an orchestrator would: a service that dies is started
// again on the same addresses after a capped exponential backoff, forever, and every death, restart and
// change of readiness is said. The platform is "whole" only while all four answer /readyz with 200.
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const { startService, stopChild, serviceEnv, portOf } = require("./launcher.cjs");

/** Start order: each learns the gRPC addresses of those before it. */
export const serviceOrder = ["policy", "tool-exec", "agent-runner", "gateway"];

/** The wait before restart attempt `attempt` (1-based): `baseMs` doubling, at most `maxMs`. */
export function restartDelay(attempt, { baseMs = 500, maxMs = 30_000 } = {}) {
  return Math.min(maxMs, baseMs * 2 ** (attempt - 1));
}

/** "0.5 s", "12 s", "3 min 12 s". */
export function duration(ms) {
  if (ms < 10_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function exitText({ code, signal }) {
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

function alive(child) {
  return child.exitCode === null && child.signalCode === null;
}

function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Options: `env` (for every service), `perService` (each service's own variables, by name), `logDir`, the addresses to use (`policyAddr`, `toolExecAddr` as
 * host:port, `gatewayPort`; port 0 = picked at first start, then kept), `healthPort` (0 = each service
 * picks a free one, then keeps it; undefined = each service's default), `say(text)`, `onReady(addresses)`
 * (called once, the first time all four are ready), `onChange(services)` (the live pids and addresses).
 * Timings (ms): `stableMs` (60 s up resets the backoff), `stopGraceMs` (10 s from SIGTERM to SIGKILL),
 * `listenTimeoutMs` (60 s), `readyPollMs` (250), `watchPollMs` (2 s), `reportNotReadyAfterMs` (10 s).
 */
export function createSupervisor(options) {
  const { env, perService = {}, logDir, say, onReady = () => {}, onChange = () => {} } = options;
  const t = {
    stableMs: 60_000,
    stopGraceMs: 10_000,
    listenTimeoutMs: 60_000,
    readyPollMs: 250,
    watchPollMs: 2000,
    reportNotReadyAfterMs: 10_000,
    ...options.timings,
  };
  const known = { policyAddr: options.policyAddr, toolExecAddr: options.toolExecAddr, gatewayPort: options.gatewayPort };
  const slots = serviceOrder.map((name) => ({
    name,
    state: "down", // down | starting | up (listening, not ready) | ready
    child: null,
    running: null,
    timer: null,
    failures: 0,
    healthPort: options.healthPort,
    health: undefined,
    notReadySince: 0,
    reported: "",
    listening: deferred(),
  }));
  let stopping = false;
  let stopped = null;
  let whole = false;
  let bannerShown = false;
  let degradedSince = 0;
  const logOf = (name) => join(logDir, `${name}.log`);
  const gatewayUrl = () => slots[3].running?.ready.addr;

  function snapshot() {
    return Object.fromEntries(
      slots.map((s) => [
        s.name,
        { pid: s.child?.pid ?? null, state: s.state, health: s.health ?? null, ...(s.running?.ready.addr ? { addr: s.running.ready.addr } : {}) },
      ]),
    );
  }
  const changed = () => onChange(snapshot());

  function addresses() {
    return {
      gatewayUrl: gatewayUrl(),
      policyAddr: known.policyAddr,
      toolExecAddr: known.toolExecAddr,
      health: Object.fromEntries(slots.map((s) => [s.name, s.health])),
    };
  }

  function markNotWhole() {
    if (!whole) return false;
    whole = false;
    degradedSince = Date.now();
    return true;
  }

  function checkWhole() {
    if (whole || stopping || !slots.every((s) => s.state === "ready")) return;
    whole = true;
    if (!bannerShown) {
      bannerShown = true;
      onReady(addresses());
    } else {
      say(`all four services are ready again: Steward is whole (it was degraded for ${duration(Date.now() - degradedSince)})`);
    }
  }

  function died(slot, text, uptimeMs) {
    slot.state = "down";
    slot.running = null;
    slot.child = null;
    if (uptimeMs >= t.stableMs) slot.failures = 0;
    slot.failures += 1;
    const delay = restartDelay(slot.failures);
    const platform = markNotWhole() ? "Steward is degraded; " : bannerShown ? "Steward is still degraded; " : "";
    say(`${text}; ${platform}restart attempt ${slot.failures} in ${duration(delay)} (log: ${logOf(slot.name)})`);
    changed();
    slot.timer = setTimeout(() => void launch(slot), delay);
  }

  async function launch(slot) {
    slot.timer = null;
    if (stopping) return;
    slot.state = "starting";
    let svc;
    try {
      const serviceEnvironment = serviceEnv(slot.name, env, { ...known, healthPort: slot.healthPort }, perService);
      svc = await startService(slot.name, serviceEnvironment, {
        logFile: logOf(slot.name),
        detached: true,
        timeoutMs: t.listenTimeoutMs,
        onSpawn: (child) => {
          slot.child = child;
          changed();
        },
      });
    } catch (err) {
      if (stopping) return;
      const how = err.exit ? exitText(err.exit) : `did not log "listening" within ${duration(t.listenTimeoutMs)} and was killed`;
      died(slot, `${slot.name} (pid ${err.pid}) ${how} before listening${err.stderrTail ? `: ${err.stderrTail}` : ""}`, 0);
      return;
    }
    if (stopping) return; // stop() has this child already
    slot.running = svc;
    slot.state = "up";
    slot.notReadySince = Date.now();
    slot.reported = "";
    if (slot.name === "policy" && svc.ready.addr) known.policyAddr = svc.ready.addr;
    if (slot.name === "tool-exec" && svc.ready.addr) known.toolExecAddr = svc.ready.addr;
    if (slot.name === "gateway" && svc.ready.addr) known.gatewayPort = portOf(svc.ready.addr);
    slot.health = svc.health;
    if (svc.health) slot.healthPort = portOf(svc.health);
    const where = [svc.ready.addr, svc.health && svc.health !== svc.ready.addr ? `health ${svc.health}` : null].filter(Boolean).join(", ");
    say(`${slot.name} is listening (pid ${svc.pid})${where ? `: ${where}` : ""}`);
    changed();
    svc.exited.then((exit) => {
      if (stopping || slot.running !== svc) return;
      const up = Date.now() - svc.startedAt;
      died(slot, `${slot.name} (pid ${svc.pid}) ${exitText(exit)} after ${duration(up)}`, up);
    });
    slot.listening.resolve();
    void watch(slot, svc);
  }

  /** Follows one live process's readiness until it exits (or, without a health URL, marks it ready). */
  async function watch(slot, svc) {
    while (!stopping && slot.running === svc) {
      const { ready, reasons } = await svc.probe();
      if (stopping || slot.running !== svc) return;
      if (ready) becameReady(slot);
      else notReady(slot, reasons);
      if (!svc.health) return;
      await new Promise((r) => setTimeout(r, slot.state === "ready" ? t.watchPollMs : t.readyPollMs).unref());
    }
  }

  function becameReady(slot) {
    if (slot.state === "ready") return;
    slot.state = "ready";
    say(`${slot.name} is ready`);
    changed();
    checkWhole();
  }

  function notReady(slot, reasons) {
    const why = reasons.join("; ");
    if (slot.state === "ready") {
      slot.state = "up";
      slot.notReadySince = Date.now();
      slot.reported = why;
      const degraded = markNotWhole();
      say(`${slot.name} is no longer ready: ${why}${degraded ? "; Steward is degraded" : ""}`);
      changed();
    } else if (Date.now() - slot.notReadySince >= t.reportNotReadyAfterMs && why !== slot.reported) {
      slot.reported = why;
      say(`${slot.name} is up but not ready after ${duration(Date.now() - slot.notReadySince)}: ${why}`);
    }
  }

  return {
    /** Starts the services in order, each once the one before it listens (retrying as long as it takes). */
    async start() {
      for (const slot of slots) {
        void launch(slot);
        await slot.listening.promise;
        if (stopping) return;
      }
    },
    /** Stops every service, a start in flight included, and cancels pending restarts. */
    stop() {
      if (stopped) return stopped;
      stopping = true;
      for (const slot of slots) {
        clearTimeout(slot.timer);
        slot.listening.resolve();
      }
      const live = slots.filter((s) => s.child && alive(s.child));
      if (live.length > 0) {
        say(`stopping ${live.map((s) => `${s.name} (pid ${s.child.pid})`).join(", ")}: SIGTERM, SIGKILL after ${duration(t.stopGraceMs)}`);
      }
      stopped = Promise.all(live.map((s) => stopChild(s.child, t.stopGraceMs))).then(() => {
        for (const s of slots) Object.assign(s, { state: "down", child: null, running: null });
        changed();
      });
      return stopped;
    },
    /** Kills every live service group at once (for a launcher that is exiting without a chance to wait). */
    killNow() {
      for (const s of slots) {
        if (!s.child || !alive(s.child)) continue;
        try {
          process.kill(-s.child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    },
    services: snapshot,
  };
}
