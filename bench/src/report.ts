import type { Machine } from "./machine";
import type { PgFloor } from "./floors/pg-floor";
import type { NatsFloor } from "./floors/nats-floor";
import type { GrpcFloor } from "./floors/grpc-floor";
import type { SkeletonFloor } from "./floors/skeleton-floor";
import type { Summary } from "./stats";
import type { SerialResult, ThroughputResult } from "./steward/iterations";
import type { PathResult } from "./steward/path";
import type { MemoryResult } from "./steward/memory";
import type { ReplayResult } from "./steward/replay";
import type { PolicyResult } from "./steward/policy";
import type { PeerResult } from "./peer/langgraph";
import type { PgActivity } from "./pg-activity";
import type { CannonResult } from "./gateway/load";
import type { TakeoverResult } from "./takeover/takeover";

export interface Results {
  floors?: {
    pg: PgFloor;
    nats: NatsFloor;
    grpc: GrpcFloor;
    /** A serial tool iteration cut down to what the design fixes (skeleton-floor.ts): context, not the must's. Absent in older results. */
    skeleton?: SkeletonFloor;
    stepFloorMs: number;
    /** The step floor again, each of its exchanges after `ms` idle (as between the steps of a serial run): context, not the must's. */
    idle: { ms: number; stepFloorMs: number };
  };
  steward?: { serial: SerialResult; serialRead?: SerialResult; throughput: Record<number, ThroughputResult>; readThroughput?: ThroughputResult };
  path?: PathResult;
  memory?: MemoryResult;
  replay?: ReplayResult;
  policy?: PolicyResult;
  takeover?: TakeoverResult;
  peer?: { async?: PeerResult; sync?: PeerResult };
  gateway?: { post: CannonResult; get: CannonResult; connections: number };
  errors: Record<string, string>;
  /** Machine CPU busy (%) in the second before each phase. */
  busyBefore: Record<string, number>;
  /** CPU (%) used by processes other than this bench, PostgreSQL and nats-server in that second. */
  othersBefore: Record<string, number>;
  /** Why the platform was replaced between phases, if it was. */
  restarts?: string[];
  /** The runner's RSS after each phase on the platform (MB), and when that runner had just started. */
  runnerRss?: Array<{ after: string; mb: number; startedMb: number }>;
  /** Services that exited on their own during a phase (their stderr is in results/logs/<stamp>/). */
  crashes?: Array<{ service: string; code: number | null; signal: string | null; phase: string }>;
}

export interface Row {
  readonly section: string;
  readonly measure: string;
  readonly value: string;
  readonly against?: string;
  readonly ratio?: string;
  readonly target?: string;
  readonly met?: boolean;
}

export interface TargetVerdict {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | null;
}

export const ms = (x: number) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms` : "n/a");
const num = (x: number, unit: string) => (Number.isFinite(x) ? `${x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(1)} ${unit}` : "n/a");
export const ratio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : "n/a");
const spread = (r: { min: number; max: number }, unit: string) => ` (${num(r.min, "").trim()}–${num(r.max, "").trim()}${unit ? ` ${unit}` : ""})`;

const pgLine = (a: PgActivity | undefined) =>
  a
    ? `${a.commits.toFixed(1)} commits, ${a.inserted.toFixed(1)} rows inserted, ${a.updated.toFixed(1)} updated; ` +
      `WAL ${(a.walBytes / 1024).toFixed(1)} kB, ${a.walFullPages.toFixed(2)} full pages`
    : "n/a";

/** "total 9.1 ms: runner 3.2, postgres 2.0, …" — largest first. */
export function cpuLine(cpu: Record<string, number> | undefined): string {
  if (!cpu) return "n/a";
  const parts = Object.entries(cpu)
    .filter(([k]) => k !== "total")
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(2)}`);
  return `total ${(cpu.total ?? Number.NaN).toFixed(2)} ms: ${parts.join(", ")}`;
}

export function buildRows(r: Results): { rows: Row[]; targets: TargetVerdict[] } {
  const rows: Row[] = [];
  const targets: TargetVerdict[] = [];
  const f = r.floors;
  if (f) {
    rows.push({ section: "floor", measure: "PG single-row txn, latency p50 / p99 (1 client)", value: `${ms(f.pg.latency.p50)} / ${ms(f.pg.latency.p99)}` });
    for (const [c, rate] of Object.entries(f.pg.rate)) {
      rows.push({
        section: "floor",
        measure: `PG single-row txn rate, ${c} client${c === "1" ? "" : "s"}`,
        value: num(rate.median, "txn/s") + spread(rate, ""),
      });
    }
    rows.push({ section: "floor", measure: "JetStream publish+ack, p50 / p99 (1 in flight)", value: `${ms(f.nats.latency.p50)} / ${ms(f.nats.latency.p99)}` });
    for (const [c, rate] of Object.entries(f.nats.rate))
      rows.push({ section: "floor", measure: `JetStream acked publishes, ${c} in flight`, value: num(rate.median, "msg/s") + spread(rate, "") });
    rows.push({
      section: "floor",
      measure: "gRPC loopback, one hop p50 / p99 (a call on a call stream)",
      value: `${ms(f.grpc.oneHop.p50)} / ${ms(f.grpc.oneHop.p99)}`,
    });
    rows.push({
      section: "floor",
      measure: "gRPC chained pair (runner→tool-exec→policy shape) p50 / p99",
      value: `${ms(f.grpc.chained.p50)} / ${ms(f.grpc.chained.p99)}`,
    });
    rows.push({ section: "floor", measure: "step floor = PG commit + JetStream ack + chained gRPC (p50s)", value: ms(f.stepFloorMs) });
    rows.push({
      section: "floor",
      measure: `each after ${f.idle.ms} ms idle (as between a serial run's steps): PG txn, JetStream ack, chained gRPC, p50; step floor counted with them`,
      value: `${ms(f.pg.afterIdle.p50)}, ${ms(f.nats.afterIdle.p50)}, ${ms(f.grpc.chainedAfterIdle.p50)}; ${ms(f.idle.stepFloorMs)}`,
    });
    if (f.skeleton) {
      const shapes: Array<[string, Summary]> = [
        [
          "governed iteration's skeleton, its crossings alone (model over HTTP; commit ∥ held call → PDP's record; release; effect with record; result commit)",
          f.skeleton.bare,
        ],
        [
          "  the same with what SPEC adds (each event's bus copy in order, the tool's record in a transaction of its own, a streamed answer)",
          f.skeleton.design,
        ],
      ];
      for (const [measure, t] of shapes) {
        rows.push({
          section: "floor",
          measure: `${measure}, p50 / p99`,
          value: `${ms(t.p50)} / ${ms(t.p99)}`,
          against: `step floor ${ms(f.stepFloorMs)}`,
          ratio: ratio(t.p50 / f.stepFloorMs),
        });
      }
    }
    const unary = f.grpc.unary;
    if (unary) {
      rows.push({
        section: "floor",
        measure: "gRPC unary calls (a call per request): one hop, chained pair, p50; step floor counted with them",
        value: `${ms(unary.oneHop.p50)}, ${ms(unary.chained.p50)}; ${ms(f.pg.latency.p50 + f.nats.latency.p50 + unary.chained.p50)}`,
      });
    }
  }
  const s = r.steward;
  const lgAsync = r.peer?.async;
  const lgSync = r.peer?.sync;
  if (s) {
    const it = s.serial.iteration.p50;
    const vsFloor = f ? it / f.stepFloorMs : Number.NaN;
    rows.push({
      section: "steward",
      measure: "time per iteration, median (1 run at a time)",
      value: `${ms(it)} (p99 ${ms(s.serial.iteration.p99)})`,
      against: f ? `step floor ${ms(f.stepFloorMs)}` : undefined,
      ratio: f ? ratio(vsFloor) : undefined,
      target: "≤ 1.5× floor",
      met: f ? vsFloor <= 1.5 : undefined,
    });
    targets.push({
      target: "iteration ≤ 1.5× step floor",
      measured: f ? `${ms(it)} = ${ratio(vsFloor)} the floor (${ms(f.stepFloorMs)})` : ms(it),
      met: f ? vsFloor <= 1.5 : null,
    });
    if (f) {
      rows.push({
        section: "steward",
        measure: `  the same iteration against the step floor counted after ${f.idle.ms} ms idle (context: the targets count the floor above)`,
        value: `${ratio(it / f.idle.stepFloorMs)} (${ms(f.idle.stepFloorMs)})`,
      });
      if (f.skeleton) {
        rows.push({
          section: "steward",
          measure: "  the same iteration against the governed iteration's skeleton with what SPEC adds (context: the design's own cost here)",
          value: `${ratio(it / f.skeleton.design.p50)} (${ms(f.skeleton.design.p50)})`,
        });
      }
    }
    const bd = s.serial.breakdown;
    rows.push({ section: "steward", measure: "  thought → tool_call (commit, decide, insert), p50", value: ms(bd.thoughtToToolCall.p50) });
    rows.push({ section: "steward", measure: "  tool_call → tool_result (commit, ToolExec.Invoke: PDP + tool), p50", value: ms(bd.toolCallToResult.p50) });
    rows.push({
      section: "steward",
      measure: "    of which tool-exec awaits the PDP / the tool runs / the PDP evaluates, p50",
      value: `${ms(bd.toolExecAwaitsPdp.p50)} / ${ms(bd.toolRuns.p50)} / ${ms(bd.pdpEvaluates.p50)} (whole ms as tool-exec rounds them; the evaluation is inside the first)`,
    });
    rows.push({ section: "steward", measure: "  tool_result → next answer (commit, model over HTTP, insert), p50", value: ms(bd.resultToAnswer.p50) });
    rows.push({ section: "steward", measure: "whole run ÷ 10 (POST → run.succeeded on the bus)", value: ms(s.serial.wallPerIteration.p50) });
    const rd = s.serialRead;
    if (rd) {
      rows.push({
        section: "steward",
        measure: "time per iteration of a read (test_lookup, its result kept), median (1 run at a time)",
        value: `${ms(rd.iteration.p50)} (p99 ${ms(rd.iteration.p99)})`,
        against: f ? `step floor ${ms(f.stepFloorMs)}` : undefined,
        ratio: f ? ratio(rd.iteration.p50 / f.stepFloorMs) : undefined,
      });
      rows.push({
        section: "steward",
        measure: "  read: tool_call → tool_result, p50; tool-exec awaits the PDP, p50",
        value: `${ms(rd.breakdown.toolCallToResult.p50)}; ${ms(rd.breakdown.toolExecAwaitsPdp.p50)}`,
      });
    }
    rows.push({
      section: "steward",
      measure: "outbox relay lag: event recorded → on the bus, p50 / p99",
      value: `${ms(s.serial.relayLag.p50)} / ${ms(s.serial.relayLag.p99)}`,
    });
    for (const [c, t] of Object.entries(s.throughput)) {
      const lg = Number(c) === lgAsync?.concurrency ? lgAsync : undefined;
      const vs = lg ? t.iterationsPerSecond.median / lg.iterationsPerSecond.median : Number.NaN;
      rows.push({
        section: "steward",
        measure: `throughput, ${c} concurrent run${c === "1" ? "" : "s"} (iteration p50 ${ms(t.iteration.p50)}${t.alternated ? "; windows alternated with LangGraph.js's" : ""})`,
        value: num(t.iterationsPerSecond.median, "it/s") + spread(t.iterationsPerSecond, ""),
        against: lg ? `LangGraph.js ${num(lg.iterationsPerSecond.median, "it/s")}` : undefined,
        ratio: lg ? ratio(vs) : undefined,
        target: lg ? "≥ 3× LangGraph.js" : undefined,
        met: lg ? vs >= 3 : undefined,
      });
      if (lg)
        targets.push({
          target: "throughput at 8 concurrent ≥ 3× LangGraph.js",
          measured: `${num(t.iterationsPerSecond.median, "it/s")} vs ${num(lg.iterationsPerSecond.median, "it/s")} = ${ratio(vs)}`,
          met: vs >= 3,
        });
      if (c !== "1") rows.push({ section: "steward", measure: `  CPU per iteration at ${c} concurrent, by process`, value: cpuLine(t.cpuPerIteration) });
      if (c === "8") rows.push({ section: "steward", measure: "  PostgreSQL work per iteration at 8 concurrent", value: pgLine(t.pgPerIteration) });
      if (t.failed) rows.push({ section: "steward", measure: `runs that did not succeed at ${c} concurrent`, value: String(t.failed) });
      if (t.stalled) {
        const held = (t.stallEvidence ?? [])
          .filter((e) => e.state !== "idle")
          .map((e) => `${e.application_name || "?"} ${e.state}×${e.n}`)
          .join(", ");
        rows.push({
          section: "steward",
          measure: `STALLED at ${c} concurrent: runs not ended within the run timeout`,
          value: `${t.stalled}; DB sessions then: ${held}`,
        });
      }
    }
    const rt = s.readThroughput;
    if (rt) {
      rows.push({
        section: "steward",
        measure: `throughput of reads (test_lookup), 8 concurrent runs (iteration p50 ${ms(rt.iteration.p50)})`,
        value: num(rt.iterationsPerSecond.median, "it/s") + spread(rt.iterationsPerSecond, ""),
      });
      rows.push({ section: "steward", measure: "  reads: CPU per iteration at 8 concurrent, by process", value: cpuLine(rt.cpuPerIteration) });
      rows.push({ section: "steward", measure: "  reads: PostgreSQL work per iteration at 8 concurrent", value: pgLine(rt.pgPerIteration) });
    }
  }
  for (const lg of [lgAsync, lgSync]) {
    if (!lg) continue;
    const label = `LangGraph.js (durability "${lg.durability}"${lg.durability === "async" ? ", its default" : ""})`;
    const st = s ? s.serial.iteration.p50 / lg.iteration.p50 : Number.NaN;
    rows.push({
      section: "peer",
      measure: `${label}: time per iteration, median`,
      value: `${ms(lg.iteration.p50)} (p99 ${ms(lg.iteration.p99)})`,
      against: s ? `Steward ${ms(s.serial.iteration.p50)}` : undefined,
      ratio: s ? `Steward/LG ${ratio(st)}` : undefined,
    });
    const tp = s?.throughput[lg.concurrency];
    const vs = tp ? tp.iterationsPerSecond.median / lg.iterationsPerSecond.median : Number.NaN;
    rows.push({
      section: "peer",
      measure: `${label}: throughput, ${lg.concurrency} concurrent`,
      value: num(lg.iterationsPerSecond.median, "it/s") + spread(lg.iterationsPerSecond, ""),
      against: tp ? `Steward ${num(tp.iterationsPerSecond.median, "it/s")}` : undefined,
      ratio: tp ? `Steward/LG ${ratio(vs)}` : undefined,
    });
    rows.push({ section: "peer", measure: `  CPU per iteration at ${lg.concurrency} concurrent, by process`, value: cpuLine(lg.cpuPerIteration) });
    rows.push({ section: "peer", measure: `  PostgreSQL work per iteration at ${lg.concurrency} concurrent`, value: pgLine(lg.pgPerIteration) });
  }
  const g = r.gateway;
  if (g) {
    const pg64 = f?.pg.rate[g.connections];
    const share = pg64 ? g.post.requestsPerSecond.median / pg64.median : Number.NaN;
    const postMet = pg64 ? share >= 0.5 && g.post.p99.median < 25 : undefined;
    rows.push({
      section: "gateway",
      measure: `POST /v1/agents/runs, ${g.connections} connections: req/s (p50 / p99)`,
      value: `${num(g.post.requestsPerSecond.median, "req/s")} (${ms(g.post.p50.median)} / ${ms(g.post.p99.median)})`,
      against: pg64 ? `raw PG ${num(pg64.median, "txn/s")} @${g.connections}` : undefined,
      ratio: pg64 ? `${(share * 100).toFixed(0)} %` : undefined,
      target: "≥ 50 % of PG, p99 < 25 ms",
      met: postMet,
    });
    targets.push({
      target: "POST ≥ 50 % of raw PG txn rate at 64, p99 < 25 ms",
      measured: `${num(g.post.requestsPerSecond.median, "req/s")} = ${Number.isFinite(share) ? (share * 100).toFixed(0) : "n/a"} % of ${pg64 ? num(pg64.median, "txn/s") : "n/a"}; p99 ${ms(g.post.p99.median)}`,
      met: postMet ?? null,
    });
    rows.push({ section: "gateway", measure: "  CPU per POST, by process (autocannon is in bench)", value: cpuLine(g.post.cpuPerRequest) });
    rows.push({ section: "gateway", measure: "  PostgreSQL work per POST", value: pgLine(g.post.pgPerRequest) });
    rows.push({
      section: "gateway",
      measure: `GET /v1/agents/runs/:id, ${g.connections} connections: req/s (p50 / p99)`,
      value: `${num(g.get.requestsPerSecond.median, "req/s")} (${ms(g.get.p50.median)} / ${ms(g.get.p99.median)})`,
    });
    rows.push({ section: "gateway", measure: "  CPU per GET, by process", value: cpuLine(g.get.cpuPerRequest) });
    if (g.post.non2xx || g.post.errors || g.get.non2xx || g.get.errors) {
      const codes = (c: Record<string, number>) =>
        Object.entries(c)
          .map(([k, v]) => `${k}×${v}`)
          .join(" ");
      rows.push({
        section: "gateway",
        measure: "answers by status / transport errors (POST; GET)",
        value: `${codes(g.post.statusCodes)} / ${g.post.errors}; ${codes(g.get.statusCodes)} / ${g.get.errors}`,
      });
    }
  }
  const p = r.path;
  if (p) {
    rows.push({
      section: "path",
      measure: "POST → run started (runner claimed it), p50 / p99",
      value: `${ms(p.postToStarted.p50)} / ${ms(p.postToStarted.p99)}`,
      target: "p50 < 5 ms",
      met: p.postToStarted.p50 < 5,
    });
    rows.push({ section: "path", measure: "  of which POST → 201, p50 / p99", value: `${ms(p.postAnswered.p50)} / ${ms(p.postAnswered.p99)}` });
    rows.push({
      section: "path",
      measure: "  of which run.queued → run.started (relay, JetStream, claim), p50 / p99",
      value: `${ms(p.queuedToStarted.p50)} / ${ms(p.queuedToStarted.p99)}`,
    });
    rows.push({
      section: "path",
      measure: "    run.queued → admitted (commit, copy and command on JetStream, admission), p50 / p99",
      value: `${ms(p.queuedToAdmitted.p50)} / ${ms(p.queuedToAdmitted.p99)}`,
    });
    rows.push({
      section: "path",
      measure: "    admitted → run.started (admission's commit, the runner's decision, its append), p50 / p99",
      value: `${ms(p.admittedToStarted.p50)} / ${ms(p.admittedToStarted.p99)}`,
    });
    if (p.burst) {
      rows.push({
        section: "path",
        measure: `burst: ${p.burst.runs} runs of one tenant POSTed at once, POST → run started, p50 / p99 / max (${p.burst.bursts} bursts)`,
        value: `${ms(p.burst.postToStarted.p50)} / ${ms(p.burst.postToStarted.p99)} / ${ms(p.burst.postToStarted.max)}`,
      });
    }
    targets.push({
      target: "POST → started p50 < 5 ms",
      measured: `p50 ${ms(p.postToStarted.p50)}, p99 ${ms(p.postToStarted.p99)}`,
      met: p.postToStarted.p50 < 5,
    });
  }
  const pd = r.policy;
  if (pd) {
    rows.push({
      section: "policy",
      measure: "decision, Cedar in process (pre-parsed set), p50 / p99",
      value: `${ms(pd.inProcess.p50)} / ${ms(pd.inProcess.p99)}`,
    });
    rows.push({
      section: "policy",
      measure: "decision, gRPC round trip to the PDP (facts, Cedar, decision log), p50 / p99",
      value: `${ms(pd.grpc.p50)} / ${ms(pd.grpc.p99)}`,
    });
  }
  const rp = r.replay;
  if (rp) {
    rows.push({
      section: "replay",
      measure: `restore a 25-step run (${rp.events} events: read + fold), p50 / p99`,
      value: `${ms(rp.restore.p50)} / ${ms(rp.restore.p99)}`,
      target: "< 5 ms",
      met: rp.restore.p50 < 5,
    });
    rows.push({ section: "replay", measure: "  of which the fold alone, p50", value: ms(rp.foldOnly.p50) });
    if (rp.replayCheck) rows.push({ section: "replay", measure: "  replay check of the run (npm run replay core), p50", value: ms(rp.replayCheck.p50) });
    rows.push({ section: "replay", measure: `fold rate over ${rp.foldEvents.toLocaleString("en-US")} events`, value: num(rp.foldRate, "events/s") });
    rows.push({
      section: "replay",
      measure: `read from the store + fold (${rp.storedEvents.toLocaleString("en-US")} stored events)`,
      value: num(rp.readAndFoldRate, "events/s"),
    });
    targets.push({ target: "restore < 5 ms", measured: `p50 ${ms(rp.restore.p50)}, p99 ${ms(rp.restore.p99)}`, met: rp.restore.p50 < 5 });
  }
  const tk = r.takeover;
  if (tk) {
    const e = tk.nextEvent;
    const met = tk.takenOver === tk.inFlight && tk.inFlight > 0 ? e.p99 < tk.targetMs : false;
    const target = `p99 < ${tk.targetMs} ms (SPEC §10)`;
    rows.push({
      section: "takeover",
      measure: `runner kill -9'd with runs in flight: kill → run's next event, p50 / p99 / max (${tk.rounds.length} × ${tk.runsPerRound} runs, answers held ${tk.holdMs} ms)`,
      value: `${ms(e.p50)} / ${ms(e.p99)} / ${ms(e.max)}`,
      target,
      met,
    });
    rows.push({
      section: "takeover",
      measure: "  runs taken over / in flight at the kill",
      value: `${tk.takenOver} / ${tk.inFlight}${tk.endedBeforeKill ? ` (${tk.endedBeforeKill} more had ended before the kill)` : ""}`,
    });
    rows.push({
      section: "takeover",
      measure: "  kill → survivor seen holding the lease (polled every 50 ms), p50 / p99 / max",
      value: `${ms(tk.leaseSeen.p50)} / ${ms(tk.leaseSeen.p99)} / ${ms(tk.leaseSeen.max)}`,
    });
    rows.push({
      section: "takeover",
      measure: "  CPU used by other work on the machine in the 4 s after each kill",
      value: tk.rounds.map((x) => `${x.othersBusyPct} %`).join(", "),
    });
    targets.push({
      target: `takeover ${target}`,
      measured: `p50 ${ms(e.p50)}, p99 ${ms(e.p99)}, max ${ms(e.max)}; ${tk.takenOver} of ${tk.inFlight} runs taken over`,
      met,
    });
  }
  const m = r.memory;
  if (m) {
    rows.push({
      section: "memory",
      measure: `runner RSS with ${m.maxRunning} runs in flight, peak (median)`,
      value: `${m.peakMb.toFixed(0)} MB (${m.medianMb.toFixed(0)} MB)`,
      target: "< 200 MB",
      met: m.peakMb < 200,
    });
    rows.push({
      section: "memory",
      measure: "  that runner's RSS just started / before the 100 runs / after them",
      value: `${m.freshMb.toFixed(0)} / ${m.idleMb.toFixed(0)} / ${m.afterMb.toFixed(0)} MB`,
    });
    if (m.stuck) rows.push({ section: "memory", measure: "  runs of that phase that did not end within 30 s (platform stuck)", value: String(m.stuck) });
    targets.push({
      target: "runner RSS < 200 MB with 100 runs in flight",
      measured: `peak ${m.peakMb.toFixed(0)} MB with ${m.maxRunning} running`,
      met: m.maxRunning >= m.inFlight ? m.peakMb < 200 : null,
    });
  }
  if (r.runnerRss?.length) {
    rows.push({
      section: "memory",
      measure: "  runner RSS after each phase (MB; a new runner starts at the number in brackets)",
      value: r.runnerRss.map((x) => `${x.after} ${x.mb} (${x.startedMb})`).join(", "),
    });
  }
  for (const c of r.crashes ?? [])
    rows.push({ section: "note", measure: `${c.service} CRASHED during ${c.phase}`, value: `exit code ${c.code}, signal ${c.signal}` });
  for (const reason of r.restarts ?? []) rows.push({ section: "note", measure: "platform replaced between phases", value: reason });
  return { rows, targets };
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

/** A plain-text table for the console. */
export function textTable(rows: Row[]): string {
  const cols: Array<keyof Row> = ["section", "measure", "value", "against", "ratio", "target", "met"];
  const cell = (r: Row, c: keyof Row) => (c === "met" ? (r.met === undefined ? "" : r.met ? "yes" : "NO") : String(r[c] ?? ""));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r, c).length)));
  const line = (vals: string[]) => vals.map((v, i) => pad(v, widths[i])).join(" | ");
  return [line(cols as string[]), widths.map((w) => "-".repeat(w)).join("-+-"), ...rows.map((r) => line(cols.map((c) => cell(r, c))))].join("\n");
}

/** The same table in Markdown, for docs/performance.md. */
export function markdownTable(rows: Row[]): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  const out = ["| | measure | value | against | ratio | target | met |", "| --- | --- | --- | --- | --- | --- | --- |"];
  for (const r of rows) {
    out.push(
      `| ${r.section} | ${esc(r.measure)} | ${esc(r.value)} | ${esc(r.against ?? "")} | ${esc(r.ratio ?? "")} | ${esc(r.target ?? "")} | ${r.met === undefined ? "" : r.met ? "yes" : "**no**"} |`,
    );
  }
  return out.join("\n");
}

export function machineLines(m: Machine): string {
  return [`nproc ${m.nproc} (${m.cpuModel}), ${m.memoryGb} GB RAM, Linux ${m.kernel}, Node ${m.node}`, `load average at start: ${m.loadAverageAtStart}`].join(
    "\n",
  );
}
