/**
 * SQL (a query of one row: `n`, `oldest` in seconds or null): what is not yet on the bus — the outbox rows
 * pending (neither published nor set aside) and the runs' events above their `published_version` — and how long
 * the oldest of them has waited since it was written. Through the outbox_pending and runs_bus_unsettled
 * partial indexes: cheap at any size.
 */
export const UNPUBLISHED_SQL = `
SELECT (SELECT count(*) FROM outbox WHERE published_at IS NULL AND set_aside_at IS NULL)::int
       + (SELECT coalesce(sum(version - published_version), 0) FROM runs WHERE NOT bus_settled AND version > published_version)::int AS n,
       extract(epoch FROM clock_timestamp() - least(
         (SELECT min(created_at) FROM outbox WHERE published_at IS NULL AND set_aside_at IS NULL),
         (SELECT min(e.recorded_at) FROM runs r JOIN events e ON e.stream_id = r.id AND e.version = r.published_version + 1
           WHERE NOT r.bus_settled AND r.version > r.published_version)))::float8 AS oldest`;
