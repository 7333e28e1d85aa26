// `npm run bench [-- --quick] [--profile] [--logs] [--only=floors,steward,...]`: Steward against the physical
// floor and against LangGraph.js, in one run. Prints one table and writes results/<stamp>.json (+ .md).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { createPool, type Pool } from "@steward/platform";
import { freshDatabase, freshNamespace, natsUrl, type BenchDatabase } from "./databases";
import { startFakeModel } from "./fake-model";
import { measureGrpcFloor } from "./floors/grpc-floor";
import { floorStreamName, measureNatsFloor } from "./floors/nats-floor";
import { measurePgFloor } from "./floors/pg-floor";
import { measureSkeleton } from "./floors/skeleton-floor";
import { cannon } from "./gateway/load";
import { othersBusy } from "./cpu";
import { describeMachine, machineBusy, settle } from "./machine";
import { readOptions, wants } from "./options";
import { resultsDir } from "./paths";
import { measureLangGraph, startLangGraph, type LangGraphPeer, type PeerOptions } from "./peer/langgraph";
import { deleteStreams, type BenchPlatform } from "./platform";
import { platformSession } from "./session";
import { formatSummary, profilesIn, summarizeProfile } from "./profile-summary";
import { buildRows, machineLines, markdownTable, textTable, type Results, type TargetVerdict } from "./report";
import { speedMusts } from "./speed-musts";
import { createRun, processIds, type StewardBench } from "./steward/context";
import { ITERATIONS, measureSerial, measureThroughput } from "./steward/iterations";
import { measureMemory, rssMb } from "./steward/memory";
import { measurePath } from "./steward/path";
import { measureReplay } from "./steward/replay";
import { measurePolicy } from "./steward/policy";
import { createCleanups } from "./cleanups";
import { measureTakeover } from "./takeover/takeover";
import { vacuumBetweenPhases } from "./vacuum";

/** Processes of this bench (services, peers, floor servers): not "other work on the machine". */
export const ourPids = new Set<number>();
const say = (text: string) => process.stderr.write(`bench: ${text}\n`);
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;

/**
 * Runs one phase; a failure is recorded and the next phase runs. The machine's CPU use in the second before
 * (the bench idle) is recorded: other work on the machine shows up there.
 */
async function phase<T>(results: Results, name: string, work: () => Promise<T>): Promise<T | undefined> {
  const ours = new Set([process.pid, ...ourPids]);
  const [busy, others] = await Promise.all([machineBusy(1000), othersBusy(1000, ours, cpus().length)]);
  results.busyBefore[name] = Math.round(busy * 100);
  results.othersBefore[name] = Math.round(others * 100);
  say(`${name} … (${elapsed()}; machine ${Math.round(busy * 100)} % busy before, ${Math.round(others * 100)} % by others)`);
  try {
    return await work();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    results.errors[name] = message;
    say(`${name} FAILED: ${message.split("\n")[0]}`);
    return undefined;
  }
}

async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const stamp = new Date().toISOString().replace(/\..*$/, "").replace(/:/g, "-");
  const profileDir = options.profile ? join(resultsDir, "profiles", stamp) : undefined;
  const machine = describeMachine();
  const results: Results = { errors: {}, busyBefore: {}, othersBefore: {} };
  const cleanups = createCleanups(say);
  const cleanUp = cleanups.run;

  say(`${options.quick ? "quick" : "full"} run${options.profile ? " with --cpu-prof" : ""}; ${machine.nproc} cores, Node ${machine.node}`);
  if (!options.quick) {
    // Other work on a 2-core machine moves every number; wait (bounded) for a quiet moment to start.
    for (let waited = 0; waited < 120; waited += 5) {
      const busy = await machineBusy(5000);
      if (busy < 0.3) break;
      say(`machine ${Math.round(busy * 100)} % busy; waiting for it to quieten (${waited + 5} s of at most 120 s)`);
    }
  }
  const db: BenchDatabase = await freshDatabase();
  cleanups.add(() => db.drop());
  const namespace = freshNamespace(); // the floors' stream; each platform gets its own namespace
  cleanups.add(() => deleteStreams(namespace, [floorStreamName(namespace)]));
  const model = await startFakeModel();
  cleanups.add(() => model.close());

  try {
    if (wants(options, "floors")) {
      await phase(results, "floors", async () => {
        say("  PostgreSQL single-row transactions");
        const idle = { samples: options.idleSamples, ms: options.idleMs };
        const pg = await measurePgFloor(db.url, {
          samples: options.floorSamples,
          windowMs: options.windowMs / 2,
          repeats: options.repeats,
          concurrencies: [1, 8, 64],
          idle,
        });
        say("  JetStream publish-with-ack");
        const nats = await measureNatsFloor(natsUrl, namespace, {
          samples: options.floorSamples,
          windowMs: options.windowMs / 2,
          repeats: options.repeats,
          concurrencies: [64],
          idle,
        });
        say("  gRPC calls on a call stream, one hop and chained");
        const grpc = await measureGrpcFloor({ samples: options.floorSamples, idle });
        say("  the governed iteration's skeleton: its crossings alone, then with what SPEC adds to them");
        const skeleton = await measureSkeleton(db.url, model.baseUrl, natsUrl, namespace, { samples: options.floorSamples });
        results.floors = {
          pg,
          nats,
          grpc,
          skeleton,
          stepFloorMs: pg.latency.p50 + nats.latency.p50 + grpc.chained.p50,
          idle: { ms: idle.ms, stepFloorMs: pg.afterIdle.p50 + nats.afterIdle.p50 + grpc.chainedAfterIdle.p50 },
        };
      });
    }

    const pool: Pool = createPool(db.url, { max: 4, applicationName: "steward-bench" });
    cleanups.add(() => pool.end());
    const session = platformSession({
      databaseUrl: db.url,
      modelUrl: model.baseUrl,
      pool,
      profileDir,
      logDir: options.logs ? join(resultsDir, "logs", stamp) : undefined,
      say,
      ourPids,
    });
    cleanups.add(() => session.close());
    /**
     * A phase on the platform; when it fails, the platform is replaced before the next one. When a service
     * crashed during it, the crash is recorded and the phase runs once more on a new platform (its numbers
     * would mix a working and a broken platform).
     */
    const onPlatform = async <T>(name: string, work: (b: StewardBench) => Promise<T>): Promise<T | undefined> => {
      for (let attempt = 1; ; attempt++) {
        const label = attempt === 1 ? name : `${name} (again)`;
        let spoiled = false;
        let crashed: ReturnType<BenchPlatform["crashed"]> = [];
        const vacuumMs = await vacuumBetweenPhases(pool);
        if (vacuumMs !== null) say(`vacuumed the database before ${label} (autovacuum is off on this server): ${Math.round(vacuumMs)} ms`);
        const out = await phase(results, label, async () => {
          const b = await session.bench();
          try {
            return await work(b);
          } catch (err) {
            spoiled = true;
            throw err;
          } finally {
            crashed = b.platform.crashed();
            const pid = b.platform.services.runner.child.pid;
            if (pid && !crashed.some((c) => c.service === "runner")) {
              try {
                results.runnerRss = [...(results.runnerRss ?? []), { after: label, mb: Math.round(rssMb(pid)), startedMb: Math.round(b.runnerStartRssMb) }];
              } catch {
                // the runner is gone (stopped for the gateway phase)
              }
            }
          }
        });
        if (crashed.length) {
          results.crashes = [...(results.crashes ?? []), ...crashed.map((c) => ({ ...c, phase: label }))];
          say(`${label}: ${crashed.map((c) => `${c.service} exited (code ${c.code}, signal ${c.signal})`).join(", ")}`);
          session.spoil(`${crashed.map((c) => c.service).join(", ")} crashed during ${label}`);
          if (attempt < 2) continue;
        } else if (spoiled) {
          session.spoil(`${label} failed`);
        }
        if (attempt > 1 && out !== undefined) delete results.errors[name];
        return out;
      }
    };

    const peerOptions = (durability: "async" | "sync"): PeerOptions => ({
      databaseUrl: db.url,
      modelUrl: model.baseUrl,
      durability,
      serialRuns: options.serialRuns,
      serialWarmupRuns: options.serialWarmupRuns,
      concurrency: 8,
      windowMs: options.windowMs,
      profileDir: profileDir ? join(profileDir, `langgraph-${durability}`) : undefined,
    });
    const peerPhase = (durability: "async" | "sync") => `peer (LangGraph.js, durability ${durability})`;
    /**
     * LangGraph.js (its default durability) started beside the platform, for its windows at 8 concurrent to
     * alternate with Steward's. If it fails, the failure is recorded and Steward's windows go on alone (the peer
     * phase then measures it on its own).
     */
    const peerAlongside = async (): Promise<{ alternate: () => Promise<void>; finish: () => Promise<void> } | undefined> => {
      if (!wants(options, "peer")) return undefined;
      let peer: LangGraphPeer | undefined;
      const failed = async (err: unknown) => {
        results.errors[peerPhase("async")] = err instanceof Error ? err.message : String(err);
        say(`${peerPhase("async")} FAILED: ${results.errors[peerPhase("async")].split("\n")[0]}`);
        await peer?.stop();
        peer = undefined;
      };
      say("  LangGraph.js (durability async) started beside it: its serial runs, then its windows alternate with Steward's");
      try {
        peer = await startLangGraph(peerOptions("async"));
        await peer.warmUp(); // as Steward's first window, a whole one unmeasured
      } catch (err) {
        await failed(err);
        return undefined;
      }
      return {
        alternate: async () => {
          if (!peer) return;
          await settle();
          await peer.window().catch(failed);
        },
        finish: async () => {
          if (!peer) return;
          const done = await peer.finish().catch(failed);
          if (done) results.peer = { ...results.peer, async: done };
        },
      };
    };

    const throughput: Record<number, Awaited<ReturnType<typeof measureThroughput>>> = {};
    if (wants(options, "steward")) {
      await onPlatform("steward", async (b) => {
        say(`  ${options.serialRuns} runs of ${ITERATIONS} iterations, one at a time`);
        const serial = await measureSerial(b, options.serialRuns, options.serialWarmupRuns);
        say(`  ${options.serialRuns} runs of ${ITERATIONS} reads (test_lookup), one at a time`);
        const serialRead = await measureSerial(b, options.serialRuns, options.serialWarmupRuns, "test_lookup");
        results.steward = { serial, serialRead, throughput };
        for (const c of [1, 8]) {
          const peer = c === 8 ? await peerAlongside() : undefined;
          const repeats = peer ? options.pairs : options.repeats;
          say(`  throughput at ${c} concurrent (${repeats} × ${options.windowMs / 1000} s${peer ? ", alternating with LangGraph.js's" : ""})`);
          try {
            throughput[c] = await measureThroughput(b, c, {
              windowMs: options.windowMs,
              repeats,
              runTimeoutMs: options.runTimeoutMs,
              alternate: peer?.alternate,
            });
          } finally {
            await peer?.finish();
          }
          if (throughput[c].stalled)
            throw new Error(`${throughput[c].stalled} run(s) did not end within ${options.runTimeoutMs / 1000} s at ${c} concurrent: stalled`);
        }
        say(`  throughput of reads (test_lookup) at 8 concurrent (${options.repeats} × ${options.windowMs / 1000} s)`);
        const reads = await measureThroughput(b, 8, {
          windowMs: options.windowMs,
          repeats: options.repeats,
          runTimeoutMs: options.runTimeoutMs,
          tool: "test_lookup",
        });
        if (reads.stalled) throw new Error(`${reads.stalled} read run(s) did not end within ${options.runTimeoutMs / 1000} s: stalled`);
        results.steward!.readThroughput = reads;
      });
    }
    if (wants(options, "path")) results.path = await onPlatform("path", (b) => measurePath(b, options.pathSamples, options.bursts));
    if (wants(options, "memory")) {
      // On a runner that has driven nothing yet: what 100 runs in flight cost, not what the phases before left.
      session.spoil("a fresh runner for the memory phase");
      results.memory = await onPlatform("memory", async (b) => {
        const m = await measureMemory(b, 100, 1000);
        if (m.stuck) session.spoil(`${m.stuck} of the memory phase's runs did not end`);
        return m;
      });
    }
    if (wants(options, "replay")) results.replay = await onPlatform("replay", (b) => measureReplay(b, options.restoreSamples));
    if (wants(options, "policy")) results.policy = await onPlatform("policy", (b) => measurePolicy(b, options.restoreSamples));
    // Last of the runner phases: at 32 concurrent runs a stall shows first (a tool-exec whose locks and tools shared one
    // pool deadlocked there), and the window records the database's sessions when it does.
    if (results.steward && wants(options, "steward")) {
      await onPlatform("steward at 32", async (b) => {
        say(`  throughput at 32 concurrent (${options.repeats} × ${options.windowMs / 1000} s)`);
        throughput[32] = await measureThroughput(b, 32, { windowMs: options.windowMs, repeats: options.repeats, runTimeoutMs: options.runTimeoutMs });
        if (throughput[32].stalled)
          throw new Error(`${throughput[32].stalled} run(s) did not end within ${options.runTimeoutMs / 1000} s at 32 concurrent: stalled`);
      });
    }
    if (wants(options, "takeover")) {
      // Kills runners: on a platform of its own, replaced afterwards.
      results.takeover = await onPlatform("takeover", (b) =>
        measureTakeover(b, {
          rounds: options.takeoverRounds,
          logDir: options.logs ? join(resultsDir, "logs", stamp) : undefined,
          say,
          ourPids,
          cleanup: cleanups.add,
        }),
      );
      session.spoil("the runners were killed and replaced in the takeover phase");
    }
    if (wants(options, "peer")) {
      for (const durability of ["async", "sync"] as const) {
        if (results.peer?.[durability]) continue; // measured beside Steward's windows
        const peer = await phase(results, peerPhase(durability), () => measureLangGraph({ ...peerOptions(durability), repeats: options.repeats }));
        if (peer) results.peer = { ...results.peer, [durability]: peer };
      }
    }
    if (wants(options, "gateway")) {
      const connections = 64;
      /** A platform without its runner: the runner would drive every run the load creates and take the CPU. */
      const gatewayOnly = async (b: StewardBench) => {
        await b.platform.stopRunner();
        session.spoil("the runner was stopped for the gateway phase");
        return b;
      };
      const post = await onPlatform("gateway POST", async (b) => {
        await gatewayOnly(b);
        say(`  autocannon POST, ${connections} connections, ${options.repeats} × ${options.cannonSeconds} s`);
        return cannon(`${b.platform.gatewayUrl}/v1/agents/runs`, {
          method: "POST",
          token: b.token,
          body: { input: "Count for me [iters:0]" },
          connections,
          seconds: options.cannonSeconds,
          repeats: options.repeats,
          pids: processIds(b),
          pool: b.pool,
        });
      });
      const get = await onPlatform("gateway GET", async (b) => {
        await gatewayOnly(b);
        const target = await createRun(b, 0);
        say(`  autocannon GET, ${connections} connections, ${options.repeats} × ${options.cannonSeconds} s`);
        return cannon(`${b.platform.gatewayUrl}/v1/agents/runs/${target.id}`, {
          method: "GET",
          token: b.token,
          connections,
          seconds: options.cannonSeconds,
          repeats: options.repeats,
          pids: processIds(b),
          pool: b.pool,
        });
      });
      if (post && get) results.gateway = { post, get, connections };
    }
    results.restarts = session.restarts;
  } finally {
    say(`cleaning up (${elapsed()})`);
    await cleanUp();
  }

  const { rows, targets } = buildRows(results);
  const musts = speedMusts(results);
  const verdict = (t: TargetVerdict) => (t.met === null ? "n/a" : t.met ? "met" : "MISSED");
  const profiles: string[] = [];
  if (profileDir) {
    let names: Record<string, string> = {};
    try {
      names = JSON.parse(readFileSync(join(profileDir, "pids.json"), "utf8")) as Record<string, string>;
    } catch {
      // no platform was started
    }
    for (const dir of [profileDir, join(profileDir, "langgraph-async"), join(profileDir, "langgraph-sync")]) {
      try {
        for (const file of profilesIn(dir)) {
          const pid = /\.(\d+)\.(?:\d+\.\d+\.)?cpuprofile$/.exec(file)?.[1] ?? "";
          const label = names[pid] ?? (dir === profileDir ? "bench" : dir.slice(profileDir.length + 1));
          profiles.push(formatSummary(summarizeProfile(file, 20), `${label} (${file.slice(profileDir.length + 1)})`));
        }
      } catch {
        // no profiles there
      }
    }
    writeFileSync(join(profileDir, "summary.txt"), profiles.join("\n\n"));
  }
  mkdirSync(resultsDir, { recursive: true });
  const json = join(resultsDir, `${stamp}.json`);
  writeFileSync(
    json,
    JSON.stringify({ stamp, mode: options.quick ? "quick" : "full", profiled: options.profile, machine, results, targets, musts, rows }, null, 2),
  );
  const md = [
    `# Steward bench ${stamp} (${options.quick ? "quick" : "full"}${options.profile ? ", profiled" : ""})`,
    "",
    machineLines(machine),
    "",
    markdownTable(rows),
    "",
    ...targets.map((t) => `- ${verdict(t)}: ${t.target} — ${t.measured}`),
    ...Object.entries(results.errors).map(([k, v]) => `- error in ${k}: ${v.split("\n")[0]}`),
    "",
    "The speed musts:",
    ...musts.map((t) => `- ${verdict(t)}: ${t.target} — ${t.measured}`),
    "",
    `Machine CPU busy in the second before each phase (all processes / other than this bench, PostgreSQL and NATS): ${Object.keys(results.busyBefore)
      .map((k) => `${k} ${results.busyBefore[k]} / ${results.othersBefore[k]} %`)
      .join(", ")}`,
  ].join("\n");
  writeFileSync(join(resultsDir, `${stamp}.md`), `${md}\n`);

  process.stdout.write(`\nSteward bench — ${options.quick ? "quick" : "full"} run, ${stamp}\n${machineLines(machine)}\n\n${textTable(rows)}\n\n`);
  for (const t of targets) process.stdout.write(`${verdict(t).padEnd(6)} ${t.target}: ${t.measured}\n`);
  for (const [k, v] of Object.entries(results.errors)) process.stdout.write(`error in ${k}: ${v.split("\n")[0]}\n`);
  process.stdout.write("\nthe speed musts:\n");
  for (const t of musts) process.stdout.write(`${verdict(t).padEnd(6)} ${t.target}: ${t.measured}\n`);
  process.stdout.write(
    `machine CPU busy before each phase (all / others): ${Object.keys(results.busyBefore)
      .map((k) => `${k} ${results.busyBefore[k]}/${results.othersBefore[k]} %`)
      .join(", ")}\n`,
  );
  if (profileDir) process.stdout.write(`\nprofiles and summary: ${profileDir}\n`);
  process.stdout.write(`\nresults: ${json}\ntook ${elapsed()}\n`);
  process.exit(Object.keys(results.errors).length ? 1 : 0);
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
