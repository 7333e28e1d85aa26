#!/usr/bin/env node
// `npm run stop`: stops what `npm start` left running under this Steward home (STEWARD_HOME, default
// .steward/): a launcher still running (which then stops its services and the servers it started), services
// left behind by a launcher that was killed, and the PostgreSQL/nats-server Steward started because none
// answered (by `npm start` or `npm test`). Servers Steward did not start are never touched.
import { natsRecord, postgresRecord, say, stopNats, stopPostgres } from "./dependencies.mjs";
import { stewardHome } from "./paths.mjs";
import { isRecordedProcess, readRunFile, removeRunFile, stopProcess, stopRecordedServices } from "./run-files.mjs";

let stopped = 0;
let failed = false;

const launcher = readRunFile("launcher.json");
if (launcher && isRecordedProcess(launcher.pid, "start.mjs")) {
  say(`stopping npm start (pid ${launcher.pid}); it stops its services and the servers it started`);
  // Its own shutdown takes at most 10 s for the services, then the servers' own stop.
  const how = await stopProcess(launcher.pid, { graceMs: 30_000 });
  if (how === "killed") say(`npm start (pid ${launcher.pid}) did not stop within 30 s and was killed`);
  stopped++;
}
removeRunFile("launcher.json");
stopped += await stopRecordedServices(say);

const pg = postgresRecord();
if (pg) {
  say(`stopping PostgreSQL (pid ${pg.pid}, data in ${pg.dataDir}), which Steward started`);
  try {
    stopPostgres(pg);
    stopped++;
  } catch (err) {
    say(err instanceof Error ? err.message : String(err));
    failed = true;
  }
}
const nats = natsRecord();
if (nats) {
  say(`stopping nats-server (pid ${nats.pid}), which Steward started`);
  await stopNats(nats);
  stopped++;
}
say(stopped === 0 ? `nothing of Steward's was running (home ${stewardHome})` : failed ? "stopped what it could" : "stopped");
process.exit(failed ? 1 : 0);
