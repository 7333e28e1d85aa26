import { isoToMs, summarize, type Summary } from "../stats";
import { createRun, type StewardBench } from "./context";

export interface PathResult {
  /** POST sent → run.started recorded (the runner has claimed the run and appended run.started). */
  readonly postToStarted: Summary;
  /** POST sent → 201 received. */
  readonly postAnswered: Summary;
  /** run.queued recorded → run.started recorded: outbox relay → JetStream → runner's consumer → claim. */
  readonly queuedToStarted: Summary;
}

/**
 * POST → started, one run at a time on an otherwise idle platform. The runs answer at once (no tool), and
 * each is waited for before the next. Times: the bench's wall clock and PostgreSQL's clock_timestamp()
 * (events.recorded_at), same machine.
 */
export async function measurePath(bench: StewardBench, samples: number): Promise<PathResult> {
  const posted = new Map<string, { postedAt: number; answeredAt: number }>();
  for (let i = 0; i < samples + 5; i++) {
    const run = await createRun(bench, 0);
    await bench.watcher.ended(run.id);
    if (i >= 5) posted.set(run.id, run); // the first five warm up
  }
  const { rows } = await bench.pool.query<{ stream_id: string; type: string; recorded_at: string }>(
    `SELECT stream_id, type, recorded_at FROM events WHERE stream_id = ANY($1::uuid[]) AND type IN ('run.queued', 'run.started')`,
    [[...posted.keys()]],
  );
  const at = new Map<string, number>();
  for (const r of rows) at.set(`${r.stream_id}/${r.type}`, isoToMs(r.recorded_at));
  const toStarted: number[] = [];
  const answered: number[] = [];
  const queuedToStarted: number[] = [];
  for (const [id, run] of posted) {
    const started = at.get(`${id}/run.started`);
    const queued = at.get(`${id}/run.queued`);
    if (started === undefined || queued === undefined) continue;
    toStarted.push(started - run.postedAt);
    answered.push(run.answeredAt - run.postedAt);
    queuedToStarted.push(started - queued);
  }
  return { postToStarted: summarize(toStarted), postAnswered: summarize(answered), queuedToStarted: summarize(queuedToStarted) };
}
