/**
 * `work` run at most once per `minIntervalMs`, however often asked: callers in between (the collectors of
 * one scrape, scrapes from several Prometheus servers) share the last run's promise, and a run still in
 * flight is always shared, never started twice.
 */
export function atMostEvery<T>(minIntervalMs: number, work: () => Promise<T>, now: () => number = Date.now): () => Promise<T> {
  let last: { at: number; result: Promise<T>; settled: boolean } | null = null;
  return () => {
    const t = now();
    if (last && (!last.settled || t - last.at < minIntervalMs)) return last.result;
    const run: { at: number; result: Promise<T>; settled: boolean } = { at: t, result: work(), settled: false };
    run.result.then(
      () => (run.settled = true),
      () => (run.settled = true),
    );
    last = run;
    return run.result;
  };
}
