#!/usr/bin/env node
// `npm start`: the whole platform on this machine, from a fresh clone, supervised until Ctrl-C (or SIGTERM,
// SIGHUP, `npm run stop`), which stops every service and the PostgreSQL/nats-server this run started.
// STEWARD_SKIP_BUILD=1 skips `npm ci` and the build (the services must be built already).
import { createRequire } from "node:module";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { build, defaults, ensureInstalled, ensureNats, ensurePostgres, say } from "./dependencies.mjs";
import { root, stewardHome } from "./paths.mjs";
import { isRecordedProcess, readRunFile, removeRunFile, stopRecordedServices, writeRunFile } from "./run-files.mjs";
import { createSupervisor, serviceOrder } from "./supervisor.mjs";
import { demo, seedDemo } from "./seed.mjs";
import { internalPlanes, localCredentials, writeNatsConfig } from "./internal-planes.mjs";

const require = createRequire(import.meta.url);
const { entryOf } = require("./launcher.cjs");

/** PostgreSQL and nats-server started by this run: they stop with it. */
const servers = [];
/** Servers an earlier run (or `npm test`) started and left running: they stay. */
const kept = [];
let supervisor = null;
let shuttingDown = null;
/** Set once this launcher has recorded itself (a second one on the same home must not erase the first's). */
let ownsRunFiles = false;
/** Settles when the steps before the supervisor are over, so that a shutdown sees every server they started. */
let booted = Promise.resolve();

function shutdown(reason, code = 0) {
  if (shuttingDown) return shuttingDown;
  say(`${reason}: stopping`);
  shuttingDown = (async () => {
    // A step in flight (say, a server starting) finishes first, so that what it started is stopped too; bounded.
    await Promise.race([booted.catch(() => undefined), new Promise((r) => setTimeout(r, 30_000).unref())]);
    await supervisor?.stop();
    for (const server of [...servers].reverse()) {
      say(`stopping ${server.name} (pid ${server.pid}), which this npm start started`);
      try {
        await server.stop();
      } catch (err) {
        say(`${err instanceof Error ? err.message : String(err)}; \`npm run stop\` tries again`);
        code = 1;
      }
    }
    if (ownsRunFiles) {
      removeRunFile("services.json");
      removeRunFile("launcher.json");
    }
    const left = kept.length > 0 ? `; ${kept.join(" and ")} keep running (\`npm run stop\` stops them)` : "";
    say(`stopped${left}`);
    process.exit(code);
  })();
  return shuttingDown;
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => void shutdown(`received ${signal}`));
process.on("uncaughtException", (err) => void shutdown(`internal error: ${err.stack ?? err}`, 1));
process.on("unhandledRejection", (err) => void shutdown(`internal error: ${err instanceof Error ? err.stack : String(err)}`, 1));
// Last resort when the launcher exits without stopping its services: nothing it started outlives it.
process.on("exit", () => supervisor?.killNow());

/** HEALTH_PORT: unset, each service's default port; 0, a free port each (kept across restarts). */
function healthPort() {
  const value = process.env.HEALTH_PORT;
  if (value === undefined || value === "") return undefined;
  if (value === "0") return 0;
  throw new Error(`HEALTH_PORT=${value}: npm start runs four services with a health port; set it to 0 (free ports) or leave it unset (their defaults)`);
}

function checkBuilt() {
  const missing = serviceOrder.map(entryOf).filter((f) => !existsSync(f));
  if (missing.length > 0) throw new Error(`STEWARD_SKIP_BUILD=1, but ${missing.join(", ")} is missing: run \`npm run build\` first`);
}

async function prepare() {
  const other = readRunFile("launcher.json");
  if (other && other.pid !== process.pid && isRecordedProcess(other.pid, "start.mjs")) {
    throw new Error(`npm start is already running (pid ${other.pid}) with Steward home ${stewardHome}; \`npm run stop\` stops it`);
  }
  await stopRecordedServices(say);
  writeRunFile("launcher.json", { pid: process.pid, startedAt: new Date().toISOString() });
  ownsRunFiles = true;
  if (process.env.STEWARD_SKIP_BUILD === "1") checkBuilt();
  else {
    ensureInstalled();
    build();
  }
  const databaseUrl = process.env.DATABASE_URL || defaults.DATABASE_URL;
  const natsUrl = process.env.NATS_URL || defaults.NATS_URL;
  const creds = localCredentials(stewardHome);
  // A nats-server this npm start runs gets a user per service (SPEC §10); one already at NATS_URL is used as it is.
  const natsConfig = writeNatsConfig(stewardHome, process.env.STEWARD_NATS_NAMESPACE || "", creds.nats);
  let natsUsers = false;
  for (const [name, ensure, url] of [
    ["PostgreSQL", ensurePostgres, databaseUrl],
    ["nats-server", ensureNats, natsUrl],
  ]) {
    if (shuttingDown) return null;
    const server = await ensure(url, { configFile: natsConfig });
    if (name === "nats-server") natsUsers = Boolean(server.auth);
    if (server.started) servers.push(server);
    if (server.recorded) {
      kept.push(name);
      say(`using the ${name} that an earlier npm start or npm test started; it keeps running (\`npm run stop\` stops it)`);
    }
  }
  if (shuttingDown) return null;
  const { ensureDatabase, migrate } = require(join(root, "packages", "store", "dist"));
  await ensureDatabase(databaseUrl);
  const applied = await migrate(databaseUrl);
  say(applied.length ? `migrated: ${applied.join(", ")}` : "database schema is up to date");
  const seeded = await seedDemo(databaseUrl);
  if (seeded) say(`seeded ${seeded} demo documents for tenant "${demo.tenant}"`);
  const { developmentSecret, mintDevelopmentToken } = require(join(root, "services", "gateway", "dist", "tools.js"));
  const secret = process.env.STEWARD_JWT_SECRET || developmentSecret(join(stewardHome, "dev-jwt-secret"));
  const token = await mintDevelopmentToken(secret, { tenant: demo.tenant, user: demo.user });
  const testHooks = ["1", "true"].includes(process.env.STEWARD_TEST_HOOKS ?? "");
  const planes = await internalPlanes({ home: stewardHome, databaseUrl, natsUsers, creds, testHooks, say });
  // Unset, STEWARD_ENV means production to a service; npm start is the development platform unless told otherwise.
  const stewardEnv = process.env.STEWARD_ENV || "development";
  return {
    env: {
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
      STEWARD_ENV: stewardEnv,
      STEWARD_HOME: stewardHome,
      STEWARD_JWT_SECRET: secret,
      // The tenant whose administrators see the whole platform's status (`npm run status` mints its token).
      STEWARD_OPERATOR_TENANT: process.env.STEWARD_OPERATOR_TENANT || "operator",
      // The operator's list of which tenants may have each dataset: the demo dataset for the demo tenant.
      DATASET_TENANTS: process.env.DATASET_TENANTS || JSON.stringify({ [demo.dataset]: [demo.tenant] }),
    },
    perService: planes.perService,
    planes: planes.summary,
    token,
  };
}

function banner({ gatewayUrl: url, policyAddr, toolExecAddr, health }, token, logDir, planes) {
  const healthOf = (name) => (health[name] ? `   (health and /metrics ${health[name]})` : "");
  const model = process.env.LLM_BASE_URL
    ? `model: ${process.env.LLM_MODEL || "default"} at LLM_BASE_URL`
    : "model: the deterministic demo model (set LLM_BASE_URL, LLM_API_KEY, LLM_MODEL for a real one)";
  const stops = servers.length > 0 ? `the four services and the ${servers.map((s) => s.name).join(" and ")} this npm start started` : "the four services";
  const stays = kept.length > 0 ? `\n${kept.join(" and ")} (started earlier by Steward, not by this run) keep running; \`npm run stop\` stops them.` : "";
  return `
Steward is running.
  gateway     ${url}${healthOf("gateway")}
  policy      ${policyAddr} (gRPC)${healthOf("policy")}
  tool-exec   ${toolExecAddr} (gRPC)${healthOf("tool-exec")}
  runner${health["agent-runner"] ? `      health ${health["agent-runner"]}` : "      (no health endpoint)"}
  logs        ${logDir}
  ${model}

Between the services:
${planes.map((line) => `  ${line}`).join("\n")}

A token for tenant "${demo.tenant}", user "${demo.user}" (role member):
  export STEWARD_TOKEN=${token}

Open the web console and sign in as the demo user with one click:
  ${url}/console/

Ask a question (the answer comes from the demo knowledge base) and follow the run live:
  npx steward run "How long do I have to ask for a refund?" --follow
or over HTTP (the API reference is at ${url}/docs):
  curl -s -X POST ${url}/v1/agents/runs -H "Authorization: Bearer $STEWARD_TOKEN" -H 'Content-Type: application/json' -d '{"input":"How long do I have to ask for a refund?"}'

Then read the run (queued -> running -> succeeded) and its events:
  curl -s ${url}/v1/agents/runs/<id> -H "Authorization: Bearer $STEWARD_TOKEN"
  curl -s ${url}/v1/agents/runs/<id>/events -H "Authorization: Bearer $STEWARD_TOKEN"

A service that dies is started again (backoff 0.5 s doubling to 30 s); this launcher says so.
Press Ctrl-C to stop ${stops}.${stays}
`;
}

async function main() {
  const health = healthPort();
  booted = prepare();
  const prepared = await booted;
  if (!prepared || shuttingDown) return;
  const logDir = join(stewardHome, "logs");
  mkdirSync(logDir, { recursive: true });
  supervisor = createSupervisor({
    env: prepared.env,
    perService: prepared.perService,
    logDir,
    policyAddr: process.env.POLICY_ADDR || "127.0.0.1:50052",
    toolExecAddr: process.env.TOOL_EXEC_ADDR || "127.0.0.1:50051",
    gatewayPort: Number(process.env.GATEWAY_PORT || 8080),
    healthPort: health,
    say,
    onReady: (addresses) => process.stdout.write(banner(addresses, prepared.token, logDir, prepared.planes)),
    onChange: (services) => writeRunFile("services.json", { launcher: process.pid, services }),
  });
  say(`starting ${serviceOrder.join(", ")} (logs in ${logDir}); the ready banner follows once all four are ready`);
  await supervisor.start();
}

main().catch((err) => void shutdown(`could not start: ${err instanceof Error ? err.message : String(err)}`, 1));
