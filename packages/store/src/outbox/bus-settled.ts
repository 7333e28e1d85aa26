/**
 * SQL: the new `bus_settled` of a runs row `r` whose events are on the bus up to `version` (an expression): true
 * once the run has ended and all of them are out, else false. It changes once in a run's life, so the marks of an
 * open run change no indexed column (migration 029).
 */
export const SETTLED = (version: string): string =>
  `(r.state IN ('succeeded', 'failed', 'cancelled') AND greatest(r.published_version, ${version}) >= r.version)`;

/**
 * SQL: the CTE `locked`, the rows of the CTE `source` whose runs' rows are locked, in id order, so that two
 * statements marking the same runs (two writers, or a writer and a relay) never wait for each other in a cycle.
 * It keeps the source's columns, so that the update joins `locked` alone: one lookup of the run by its key per
 * row. (A `WHERE r.id IN (SELECT id FROM locked)` beside the source was planned as a semi-join scanning `locked`
 * once per run: quadratic in the runs marked together; docs/performance.md, "Design decisions and the measurements
 * behind them".)
 */
export const LOCK_RUNS_IN_ORDER = (source: string): string =>
  `locked AS (SELECT ${source}.* FROM runs r JOIN ${source} ON ${source}.id = r.id ORDER BY r.id FOR NO KEY UPDATE OF r)`;
