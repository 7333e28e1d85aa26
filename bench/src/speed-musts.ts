import { ms, ratio, type Results, type TargetVerdict } from "./report";
import { median } from "./stats";

/**
 * The speed musts, each judged from one run's results (docs/performance.md, "Latest run"): `met` is null when the
 * phases it needs did not run (`--only`), so a partial run never claims a must either way.
 */
export function speedMusts(r: Results): TargetVerdict[] {
  const out: TargetVerdict[] = [];
  const na = (target: string, needs: string): TargetVerdict => ({ target, measured: `needs ${needs}`, met: null });
  const f = r.floors;
  const s = r.steward;
  const lg = r.peer?.async;

  const iteration = "iteration ≤ 4× the step floor";
  if (f && s) {
    const x = s.serial.iteration.p50 / f.stepFloorMs;
    // Context, not the verdict: what the design's skeleton alone is against the same floor in the same run.
    const skeleton = f.skeleton ? `; the design's skeleton alone ${ms(f.skeleton.design.p50)} = ${ratio(f.skeleton.design.p50 / f.stepFloorMs)}` : "";
    out.push({ target: iteration, measured: `${ms(s.serial.iteration.p50)} = ${ratio(x)} the floor (${ms(f.stepFloorMs)})${skeleton}`, met: x <= 4 });
  } else out.push(na(iteration, "the floors and steward phases"));

  const at8 = s?.throughput[8];
  const throughput = "throughput at 8 concurrent ≥ 1.2× LangGraph.js (its default durability)";
  const cpu = "CPU per iteration at 8 concurrent ≤ LangGraph.js's";
  if (at8 && lg && lg.concurrency === 8) {
    const ours = at8.iterationsPerSecond;
    const theirs = lg.iterationsPerSecond;
    const rates = `${ours.median.toFixed(0)} vs ${theirs.median.toFixed(0)} it/s`;
    // Windows measured in alternation are compared pair by pair: each pair saw the same moments of the host.
    const pairs = at8.alternated && ours.values.length === theirs.values.length ? ours.values.map((v, i) => v / theirs.values[i]) : null;
    if (pairs) {
      const x = median(pairs);
      out.push({
        target: throughput,
        measured: `${rates}; windows alternated, Steward/LG by pair ${pairs.map((p) => p.toFixed(2)).join(", ")}: median ${ratio(x)}`,
        met: x >= 1.2,
      });
    } else {
      const x = ours.median / theirs.median;
      out.push({ target: throughput, measured: `${rates} = ${ratio(x)}`, met: x >= 1.2 });
    }
    const ourCpu = at8.cpuPerIteration.total;
    const theirCpu = lg.cpuPerIteration.total;
    out.push({
      target: cpu,
      measured: `${ms(ourCpu)} vs ${ms(theirCpu)}`,
      met: Number.isFinite(ourCpu) && Number.isFinite(theirCpu) ? ourCpu <= theirCpu : null,
    });
  } else {
    out.push(na(throughput, "the steward and peer phases"));
    out.push(na(cpu, "the steward and peer phases"));
  }

  const post = "POST ≥ 25 % of raw PostgreSQL's rate at 64 connections, p99 < 50 ms";
  const g = r.gateway;
  const pg = g && f?.pg.rate[g.connections];
  if (g && pg) {
    const share = g.post.requestsPerSecond.median / pg.median;
    out.push({
      target: post,
      measured: `${(share * 100).toFixed(0)} % of ${pg.median.toFixed(0)} txn/s, p99 ${ms(g.post.p99.median)}`,
      met: share >= 0.25 && g.post.p99.median < 50,
    });
  } else out.push(na(post, "the floors and gateway phases"));

  const started = "POST → started p50 < 5 ms";
  if (r.path) out.push({ target: started, measured: `p50 ${ms(r.path.postToStarted.p50)}`, met: r.path.postToStarted.p50 < 5 });
  else out.push(na(started, "the path phase"));

  const kept = "restore < 5 ms and runner RSS < 200 MB with 100 runs in flight, still";
  if (r.replay && r.memory) {
    const m = r.memory;
    const rss = m.maxRunning >= m.inFlight ? m.peakMb < 200 : null;
    out.push({
      target: kept,
      measured: `restore p50 ${ms(r.replay.restore.p50)}; peak ${m.peakMb.toFixed(0)} MB with ${m.maxRunning} running`,
      met: rss === null ? null : rss && r.replay.restore.p50 < 5,
    });
  } else out.push(na(kept, "the replay and memory phases"));

  const crashes = r.crashes ?? [];
  out.push({ target: "0 crashes", measured: crashes.length ? crashes.map((c) => `${c.service} in ${c.phase}`).join(", ") : "none", met: crashes.length === 0 });
  return out;
}
