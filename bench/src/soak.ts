// `npm run soak [-- --runs=20000 --clients=16 --snapshot-at=1000,5000 --runner-node-options="..."]`: a memory soak.
// Closed-loop clients each create a one-tool run (the scripted model calls test_counter through tool-exec and
// the PDP once, then answers) and wait for its end; every service's RSS is sampled after the first 1 000
// runs and periodically. Prints one table and writes results/soak-<stamp>.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freshDatabase, freshNamespace, natsUrl } from "./databases";
import { runInput, startFakeModel } from "./fake-model";
import { cpuNow } from "./cpu";
import { describeMachine } from "./machine";
import { resultsDir } from "./paths";
import { deleteStreams, startBenchPlatform, type BenchPlatform } from "./platform";
import { gatewayClient } from "./steward/client";
import { watchRuns } from "./steward/watcher";
import { readSoakOptions } from "./soak/options";
import { sampler, services, takeHeapSnapshot, type Sample } from "./soak/sampler";
import { soakTable, verdicts } from "./soak/table";
import { sleep } from "./stats";
import { createCleanups } from "./cleanups";

const say = (text: string) => process.stderr.write(`soak: ${text}\n`);

async function main(): Promise<void> {
  const options = readSoakOptions(process.argv.slice(2));
  const stamp = new Date().toISOString().replace(/\..*$/, "").replace(/:/g, "-");
  const workDir = join(resultsDir, `soak-${stamp}`);
  const memDir = join(workDir, "mem");
  mkdirSync(memDir, { recursive: true });
  const cleanups = createCleanups(say);
  const cleanUp = cleanups.run;

  const machine = describeMachine();
  say(`${options.runs} runs, ${options.clients} clients, ${machine.nproc} cores, Node ${machine.node}, load ${machine.loadAverageAtStart}`);
  const db = await freshDatabase();
  cleanups.add(() => db.drop());
  const model = await startFakeModel();
  cleanups.add(() => model.close());
  const namespace = freshNamespace();
  cleanups.add(() => deleteStreams(namespace));

  const nodeOptions = [`--require ${join(__dirname, "mem-preload.js")}`, options.nodeOptions];
  if (options.snapshotAt.length) nodeOptions.push(`--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${workDir}`);
  let platform: BenchPlatform | undefined;
  const samples: Sample[] = [];
  const snapshots: Array<{ runs: number; file: string | null }> = [];
  const crashes: Array<{ service: string; code: number | null; signal: string | null; afterRuns: number }> = [];
  let completed = 0;
  let failed = 0;
  let started = 0;
  const failures: string[] = [];
  let loadMs = 0;
  /** CPU ms of each service from the reference sample to the end of the load, per run ended in between. */
  let cpuPerRun: Record<string, number> = {};
  try {
    say(
      `starting the platform (namespace ${namespace}; NODE_OPTIONS ${nodeOptions.filter(Boolean).join(" ")}${options.runnerNodeOptions ? `; runner also ${options.runnerNodeOptions}` : ""})`,
    );
    platform = await startBenchPlatform({
      databaseUrl: db.url,
      namespace,
      modelUrl: model.baseUrl,
      runnerConcurrency: 128,
      logDir: options.logs ? join(workDir, "logs") : undefined,
      nodeOptions: nodeOptions.filter(Boolean).join(" "),
      runnerNodeOptions: options.runnerNodeOptions || undefined,
      extraEnv: { BENCH_MEM_DIR: memDir, BENCH_MEM_INTERVAL_MS: "2000" },
    });
    cleanups.add(() => platform!.stop());
    const p = platform;
    const pids = {
      runner: p.services.runner.child.pid!,
      toolExec: p.services.toolExec.child.pid!,
      policy: p.services.policy.child.pid!,
      gateway: p.services.gateway.child.pid!,
    };
    const watcher = await watchRuns(natsUrl, namespace);
    cleanups.add(() => watcher.close());
    const client = gatewayClient(p.gatewayUrl);
    cleanups.add(async () => client.close());
    const token = await p.token("soak-user");
    const sample = sampler(pids, memDir);
    const t0 = performance.now();
    const since = () => (performance.now() - t0) / 1000;
    samples.push(sample(0, 0, 0, "start"));

    let stopping = false;
    const deadline = Date.now() + options.maxMinutes * 60_000;
    const pendingSnapshots = [...options.snapshotAt].sort((a, b) => a - b);
    let snapshotting: Promise<void> | null = null;

    const checkCrashes = () => {
      const now = p.crashed().filter((c) => !crashes.some((k) => k.service === c.service));
      for (const c of now) {
        crashes.push({ ...c, afterRuns: completed });
        say(`${c.service} EXITED (code ${c.code}, signal ${c.signal}) after ${completed} runs; stopping the load`);
        stopping = true;
      }
    };
    let cpuAtBaseline: Record<string, number> | null = null;
    const onCompleted = () => {
      if (completed === options.baselineRuns) {
        const base = sample(since(), completed, failed, "baseline");
        samples.push(base);
        cpuAtBaseline = cpuNow(pids);
        say(`heap limits: ${services.map((k) => `${k} ${base.heapLimit[k]} MB`).join(", ")}`);
      } else if (completed % options.sampleEveryRuns === 0) samples.push(sample(since(), completed, failed));
      if (completed % options.sampleEveryRuns === 0) {
        const s = samples[samples.length - 1];
        say(
          `${completed} runs (${failed} failed), ${since().toFixed(0)} s: RSS ${services.map((k) => `${k} ${s.rss[k].toFixed(0)}`).join(", ")} MB; runner heap ${s.heapUsed.runner} MB`,
        );
      }
      if (pendingSnapshots.length && completed >= pendingSnapshots[0] && !snapshotting) {
        const at = pendingSnapshots.shift()!;
        say(`heap snapshot of the runner at ${completed} runs`);
        snapshotting = takeHeapSnapshot(pids.runner, workDir, `runner-${at}.heapsnapshot`).then((file) => {
          snapshots.push({ runs: completed, file });
          say(`  written: ${file ?? "TIMED OUT"}`);
          snapshotting = null;
        });
      }
    };
    const ticker = setInterval(() => {
      checkCrashes();
      samples.push(sample(since(), completed, failed));
    }, options.sampleEverySeconds * 1000);

    const clientLoop = async () => {
      while (!stopping && started < options.runs && Date.now() < deadline) {
        started++;
        try {
          const res = await client.post("/v1/agents/runs", { input: runInput(1) }, token);
          if (res.status !== 201) throw new Error(`POST answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`);
          const end = await watcher.ended(res.body.id as string, options.runTimeoutMs);
          if (end.type !== "run.succeeded") throw new Error(`run ${res.body.id} ended ${end.type}`);
        } catch (err) {
          failed++;
          if (failures.length < 20) failures.push(String(err instanceof Error ? err.message : err).split("\n")[0]);
          // Every run failing means the platform is broken: stop instead of spinning.
          if (failed > 100 && failed > completed) stopping = true;
        }
        completed++;
        onCompleted();
      }
    };
    await Promise.all(Array.from({ length: options.clients }, () => clientLoop()));
    loadMs = performance.now() - t0;
    clearInterval(ticker);
    if (snapshotting) await snapshotting;
    checkCrashes();
    samples.push(sample(since(), completed, failed, "end of load"));
    if (cpuAtBaseline && completed > options.baselineRuns) {
      const before: Record<string, number> = cpuAtBaseline;
      const after = cpuNow(pids);
      cpuPerRun = Object.fromEntries(services.map((k) => [k, Math.round(((after[k] - before[k]) / (completed - options.baselineRuns)) * 100) / 100]));
    }
    if (Date.now() >= deadline) say(`stopped at the time limit (${options.maxMinutes} min)`);
    if (options.idleSeconds > 0 && !crashes.length) {
      say(`idle for ${options.idleSeconds} s`);
      await sleep(options.idleSeconds * 1000);
      samples.push(sample(since(), completed, failed, `after ${options.idleSeconds} s idle`));
    }
  } finally {
    say("cleaning up");
    await cleanUp();
  }

  const rows = verdicts(samples, options.tolerance);
  const json = join(resultsDir, `soak-${stamp}.json`);
  writeFileSync(
    json,
    JSON.stringify(
      {
        stamp,
        options,
        machine,
        nodeOptions: nodeOptions.filter(Boolean).join(" "),
        runnerNodeOptions: options.runnerNodeOptions,
        completed,
        failed,
        failures,
        loadSeconds: loadMs / 1000,
        cpuPerRun,
        crashes,
        snapshots,
        verdicts: rows,
        samples,
      },
      null,
      2,
    ),
  );
  process.stdout.write(
    `\nSteward soak ${stamp}: ${completed} runs (${failed} failed) by ${options.clients} clients in ${(loadMs / 1000).toFixed(0)} s (${((completed / loadMs) * 1000).toFixed(1)} runs/s)\n\n`,
  );
  process.stdout.write(`${soakTable(rows, options.baselineRuns, options.tolerance)}\n\n`);
  process.stdout.write(
    `CPU per run after the first ${options.baselineRuns} (ms): ${Object.entries(cpuPerRun)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}\n`,
  );
  for (const c of crashes)
    process.stdout.write(`CRASH: ${c.service} exited (code ${c.code}, signal ${c.signal}) after ${c.afterRuns} runs — the figures are not a valid soak\n`);
  for (const f of failures.slice(0, 5)) process.stdout.write(`failure: ${f}\n`);
  process.stdout.write(`results: ${json}\n`);
  const ok = rows.every((r) => r.pass) && !crashes.length && completed >= options.runs && failed === 0;
  process.exit(ok ? 0 : 1);
}

main().catch((err) => {
  process.stderr.write(`soak failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
