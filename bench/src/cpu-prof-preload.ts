// Loaded with `NODE_OPTIONS=--require .../cpu-prof-preload.js` into the services the launcher starts: the
// same V8 CPU profile `node --cpu-prof` writes (Node 20 refuses --cpu-prof inside NODE_OPTIONS, and the
// launcher's command line is not ours to change). Written to $BENCH_CPU_PROF_DIR when the process exits.
import { Session } from "node:inspector";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 1000 });
  session.post("Profiler.start");
  let written = false;
  process.on("exit", () => {
    if (written) return;
    written = true;
    // An in-process session answers synchronously, so the profile is in hand before the process ends.
    session.post("Profiler.stop", (err, result) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      const name = `CPU.${new Date().toISOString().replace(/[:.]/g, "-")}.${process.pid}.cpuprofile`;
      writeFileSync(join(dir, name), JSON.stringify(result.profile));
    });
  });
}
