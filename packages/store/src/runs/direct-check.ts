/**
 * SQL references to what one run's check reads: the run's id, and its writer's word on the bus as statement
 * parameters (an append of one run) or fields of a batch's JSON element (several runs).
 */
export interface DirectCheckRefs {
  /** The run's id. */
  readonly runId: string;
  /** int: every event of the run up to this version must be on the bus (`ownFloor`). */
  readonly floor: string;
  /** bigint or NULL: the outbox id of the command the writer was handed (`Steward-Published-Through`). */
  readonly publishedThrough: string;
  /** bigint[]: the run's commands (outbox ids) the writer is publishing itself. */
  readonly ownCommands: string;
}

/**
 * SQL condition: the writer may publish a run's new events itself. Every earlier event of the run is on the bus
 * (marked, or vouched for by the command the writer was handed) or on its way there by this writer (`floor`), and no
 * earlier command of the run is held for another writer: what is not goes first, by a relay, and the new events
 * after it. The one rule of `appendRunEvents` and `appendRuns`.
 */
export function mayPublishDirectly(refs: DirectCheckRefs): string {
  return `greatest((SELECT r.published_version FROM runs r WHERE r.id = ${refs.runId}),
                (SELECT c.after_version FROM outbox c WHERE c.id = ${refs.publishedThrough} AND c.run_id = ${refs.runId}), 0) >= ${refs.floor}
     AND NOT EXISTS (
         SELECT FROM outbox h
          WHERE h.run_id = ${refs.runId} AND h.published_at IS NULL AND h.set_aside_at IS NULL AND h.id <> ALL(${refs.ownCommands})
            AND h.id > coalesce(${refs.publishedThrough}, 0))`;
}

/**
 * SQL: until when what its writer publishes itself is kept from the relays (`runs.publish_held_until`, a command's
 * `retry_at`), `graceMs` from now; NULL when `graceMs` is.
 */
export function heldFor(graceMs: string): string {
  return `clock_timestamp() + make_interval(secs => ${graceMs} / 1000)`;
}
