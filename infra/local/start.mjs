#!/usr/bin/env node
// `npm start`: the whole platform on this machine, from a fresh clone.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { build, defaults, ensureInstalled, ensureNats, ensurePostgres, say } from "./dependencies.mjs";
import { root, stewardHome } from "./paths.mjs";
import { demo, seedDemo } from "./seed.mjs";

const require = createRequire(import.meta.url);

async function main() {
  ensureInstalled();
  build();
  const databaseUrl = process.env.DATABASE_URL || defaults.DATABASE_URL;
  const natsUrl = process.env.NATS_URL || defaults.NATS_URL;
  await ensurePostgres(databaseUrl);
  await ensureNats(natsUrl);

  const { ensureDatabase, migrate } = require(join(root, "packages", "store", "dist"));
  await ensureDatabase(databaseUrl);
  const applied = await migrate(databaseUrl);
  say(applied.length ? `migrated: ${applied.join(", ")}` : "database schema is up to date");
  const seeded = await seedDemo(databaseUrl);
  if (seeded) say(`seeded ${seeded} demo documents for tenant "${demo.tenant}"`);

  const logDir = join(stewardHome, "logs");
  mkdirSync(logDir, { recursive: true });
  const { developmentSecret, mintDevelopmentToken } = require(join(root, "services", "gateway", "dist", "tools.js"));
  const secret = process.env.STEWARD_JWT_SECRET || developmentSecret(join(stewardHome, "dev-jwt-secret"));
  const env = { DATABASE_URL: databaseUrl, NATS_URL: natsUrl, STEWARD_HOME: stewardHome, STEWARD_JWT_SECRET: secret };
  const port = (addr, fallback) => (addr ? addr.slice(addr.lastIndexOf(":") + 1) : fallback);
  const { startPlatform } = require("./launcher.cjs");
  say("starting policy, tool-exec, agent-runner and gateway");
  const platform = await startPlatform(env, {
    logDir,
    gatewayPort: Number(process.env.GATEWAY_PORT || 8080),
    policyPort: Number(port(process.env.POLICY_ADDR, 50052)),
    toolExecPort: Number(port(process.env.TOOL_EXEC_ADDR, 50051)),
  });
  const token = await mintDevelopmentToken(secret, { tenant: demo.tenant, user: demo.user });
  const url = platform.gatewayUrl;
  const model = process.env.LLM_BASE_URL
    ? `model: ${process.env.LLM_MODEL || "default"} at LLM_BASE_URL`
    : "model: the deterministic demo model (set LLM_BASE_URL, LLM_API_KEY, LLM_MODEL for a real one)";
  process.stdout.write(`
Steward is running.
  gateway     ${url}   (health ${url}/healthz, ready ${url}/readyz)
  policy      ${platform.policyAddr} (gRPC)
  tool-exec   ${platform.toolExecAddr} (gRPC)
  logs        ${logDir}
  ${model}

A token for tenant "${demo.tenant}", user "${demo.user}" (role member):
  export STEWARD_TOKEN=${token}

Ask a question (the answer comes from the demo knowledge base):
  curl -s -X POST ${url}/v1/agents/runs -H "Authorization: Bearer $STEWARD_TOKEN" -H 'Content-Type: application/json' -d '{"input":"How long do I have to ask for a refund?"}'

Then read the run (queued -> running -> succeeded) and its events:
  curl -s ${url}/v1/agents/runs/<id> -H "Authorization: Bearer $STEWARD_TOKEN"
  curl -s ${url}/v1/agents/runs/<id>/events -H "Authorization: Bearer $STEWARD_TOKEN"

Press Ctrl-C to stop.
`);
  // Supervise: a service that dies is started again on the same address (at most 5 times a minute), as an
  // orchestrator would; the others reconnect to it by themselves.
  const { startService } = require("./launcher.cjs");
  const gatewayPort = url.slice(url.lastIndexOf(":") + 1);
  const envOf = {
    policy: { ...env, POLICY_ADDR: platform.policyAddr },
    "tool-exec": { ...env, POLICY_ADDR: platform.policyAddr, TOOL_EXEC_ADDR: platform.toolExecAddr },
    "agent-runner": { ...env, TOOL_EXEC_ADDR: platform.toolExecAddr },
    gateway: { ...env, POLICY_ADDR: platform.policyAddr, GATEWAY_PORT: gatewayPort },
  };
  const current = Object.values(platform.services);
  const restarts = [];
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    say("stopping");
    for (const s of [...current].reverse()) await s.stop();
    process.exit(0);
  };
  const supervise = (s) => {
    s.child.on("exit", async (code, signal) => {
      if (stopping) return;
      const now = Date.now();
      restarts.push(now);
      while (restarts[0] < now - 60_000) restarts.shift();
      if (restarts.length > 5) {
        say(`${s.service} exited (code ${code}, signal ${signal}) and services keep dying; see ${logDir}. Stopping.`);
        return void stop();
      }
      say(`${s.service} exited (code ${code}, signal ${signal}); starting it again (see ${logDir}/${s.service}.log)`);
      try {
        const next = await startService(s.service, envOf[s.service], { logFile: join(logDir, `${s.service}.log`) });
        current[current.indexOf(s)] = next;
        supervise(next);
      } catch (err) {
        say(`could not restart ${s.service}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}. Stopping.`);
        void stop();
      }
    });
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  current.forEach(supervise);
}

main().catch((err) => {
  say(`could not start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
