import type pg from "pg";
import { down, up, type Check } from "./readiness";

/**
 * PostgreSQL answers a trivial query. A pool whose every connection is busy is not down: the check then
 * trusts the connections it has rather than queue behind the work.
 */
export function postgresCheck(pool: pg.Pool): Check {
  return async () => {
    if (pool.totalCount > 0 && pool.idleCount === 0 && pool.waitingCount > 0) return { ok: true, detail: "busy" };
    try {
      await pool.query("SELECT 1");
      return up;
    } catch (err) {
      const code = (err as { code?: string }).code;
      return down(`PostgreSQL is unreachable${code ? ` (${code})` : ""}`);
    }
  };
}

/** A link (NATS, a gRPC channel) that reports itself. */
export function linkCheck(what: string, connected: () => boolean, detail?: () => string): Check {
  return () => (connected() ? up : down(`${what} is not connected${detail ? ` (${detail()})` : ""}`));
}

/**
 * A gRPC channel to a peer: down only while it fails to connect (an idle or connecting channel is
 * fine, since grpc-js connects on demand and the state is asked for with tryToConnect).
 */
export function channelCheck(what: string, state: () => string): Check {
  return () => {
    const s = state();
    return s === "transient_failure" || s === "shutdown" ? down(`${what} is unreachable (${s})`) : up;
  };
}
