/**
 * SQL: the new `bus_settled` of a runs row `r` whose events are on the bus up to `version` (an expression): true
 * once the run has ended and all of them are out, else false. It changes once in a run's life, so the marks of an
 * open run change no indexed column (migration 029).
 */
export const SETTLED = (version: string): string =>
  `(r.state IN ('succeeded', 'failed', 'cancelled') AND greatest(r.published_version, ${version}) >= r.version)`;
