import { isoToMs, summarize, type Summary } from "../stats";
import { createRun, type StewardBench } from "./context";

export interface PathResult {
  /** POST sent → run.started recorded (the runner has claimed the run and appended run.started). */
  readonly postToStarted: Summary;
  /** POST sent → 201 received. */
  readonly postAnswered: Summary;
  /** run.queued recorded → run.started recorded: outbox relay → JetStream → runner's consumer → claim. */
  readonly queuedToStarted: Summary;
  /** run.queued recorded → the run admitted (`runs.admitted_at`): the commit, the copy and the command on JetStream, the runner's admission. */
  readonly queuedToAdmitted: Summary;
  /** The run admitted → run.started recorded: the admission's commit and answer, the runner's decision, its append. */
  readonly admittedToStarted: Summary;
  /** Bursts of one tenant's runs POSTed at once: each run's POST → run.started, over every run of every burst. */
  readonly burst?: { readonly runs: number; readonly bursts: number; readonly postToStarted: Summary };
}

/** Runs POSTed at once in a burst: as many as the steward phase's widest concurrency. */
const BURST_RUNS = 32;

/**
 * POST → started, one run at a time on an otherwise idle platform. The runs answer at once (no tool), and
 * each is waited for before the next. Times: the bench's wall clock and PostgreSQL's clock_timestamp()
 * (events.recorded_at), same machine.
 */
export async function measurePath(bench: StewardBench, samples: number, bursts: number): Promise<PathResult> {
  const posted = new Map<string, { postedAt: number; answeredAt: number }>();
  for (let i = 0; i < samples + 5; i++) {
    const run = await createRun(bench, 0);
    await bench.watcher.ended(run.id);
    if (i >= 5) posted.set(run.id, run); // the first five warm up
  }
  const at = await recordedAt(bench, [...posted.keys()]);
  const toStarted: number[] = [];
  const answered: number[] = [];
  const queuedToStarted: number[] = [];
  const queuedToAdmitted: number[] = [];
  const admittedToStarted: number[] = [];
  for (const [id, run] of posted) {
    const started = at.get(`${id}/run.started`);
    const queued = at.get(`${id}/run.queued`);
    const admitted = at.get(`${id}/admitted`);
    if (started === undefined || queued === undefined || admitted === undefined) continue;
    toStarted.push(started - run.postedAt);
    answered.push(run.answeredAt - run.postedAt);
    queuedToStarted.push(started - queued);
    queuedToAdmitted.push(admitted - queued);
    admittedToStarted.push(started - admitted);
  }
  const burst = bursts > 0 ? await measureBursts(bench, bursts) : undefined;
  return {
    postToStarted: summarize(toStarted),
    postAnswered: summarize(answered),
    queuedToStarted: summarize(queuedToStarted),
    queuedToAdmitted: summarize(queuedToAdmitted),
    admittedToStarted: summarize(admittedToStarted),
    burst,
  };
}

/**
 * `bursts` times: BURST_RUNS runs of the bench's one tenant POSTed at once (each answered at once, no tool), all
 * waited for before the next burst. Each run's POST → run.started: the runs of a burst reach their runner together,
 * and each must be admitted under its tenant's limit first.
 */
async function measureBursts(bench: StewardBench, bursts: number): Promise<NonNullable<PathResult["burst"]>> {
  const toStarted: number[] = [];
  for (let b = 0; b < bursts; b++) {
    const runs = await Promise.all(Array.from({ length: BURST_RUNS }, () => createRun(bench, 0)));
    await Promise.all(runs.map((run) => bench.watcher.ended(run.id)));
    const at = await recordedAt(
      bench,
      runs.map((run) => run.id),
    );
    for (const run of runs) {
      const started = at.get(`${run.id}/run.started`);
      if (started !== undefined) toStarted.push(started - run.postedAt);
    }
  }
  return { runs: BURST_RUNS, bursts, postToStarted: summarize(toStarted) };
}

/**
 * When each run's run.queued and run.started were recorded and when it was admitted (PostgreSQL's clock: the
 * admission and the claim both stamp `admitted_at`), by `<run id>/<type>` and `<run id>/admitted`.
 */
async function recordedAt(bench: StewardBench, runIds: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await bench.pool.query<{ stream_id: string; type: string; recorded_at: string }>(
    `SELECT stream_id, type, recorded_at FROM events WHERE stream_id = ANY($1::uuid[]) AND type IN ('run.queued', 'run.started')
     UNION ALL
     SELECT id, 'admitted', admitted_at FROM runs WHERE id = ANY($1::uuid[]) AND admitted_at IS NOT NULL`,
    [runIds],
  );
  const at = new Map<string, number>();
  for (const r of rows) at.set(`${r.stream_id}/${r.type}`, isoToMs(r.recorded_at));
  return at;
}
