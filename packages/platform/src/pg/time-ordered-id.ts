import { randomUUID } from "node:crypto";

/**
 * A new row's id: a UUID of version 7 (RFC 9562). Its first 48 bits are the Unix time in milliseconds, its other
 * 74 (after the version and variant bits) random, so ids made later sort after earlier ones, as text and as
 * PostgreSQL's `uuid`. A new run's or event's entry then lands beside the last ones in every index that starts
 * with the id, where a random id touches a page anywhere in it: fewer pages to keep in memory, fewer splits, and
 * after a checkpoint one full-page image per hot page rather than one per page touched (docs/performance.md,
 * "Design decisions and the measurements behind them"). It is still an id and nothing more: no code orders by it,
 * and ids made before (version 4) stay valid.
 */
export function timeOrderedId(nowMs: number = Date.now()): string {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0 || nowMs >= 2 ** 48) throw new RangeError(`not a time a UUID v7 can hold: ${nowMs}`);
  const time = nowMs.toString(16).padStart(12, "0");
  // randomUUID's text is xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: its random part from the version's nibble on is kept.
  return `${time.slice(0, 8)}-${time.slice(8)}-7${randomUUID().slice(15)}`;
}
