/** "3 s", "4 min", "2 h", "5 d": a duration for people. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d`;
}

export const since = (iso: string | null | undefined, now = Date.now()): string => (iso ? `${duration(now - Date.parse(iso))} ago` : "");

/** A run's duration: from start to end, or to now while it runs. */
export function runDuration(started: string | null, finished: string | null, now = Date.now()): string {
  if (!started) return "";
  return duration((finished ? Date.parse(finished) : now) - Date.parse(started));
}

/**
 * An id as lists show it: its last 8 hex digits. Those are random in every UUID; the first ones of a UUID v7, which
 * Steward makes for runs and threads, are its time, the same for everything made within a minute
 * (docs/architecture.md, "Ids are time-ordered").
 */
export const shortId = (id: string): string => id.slice(-8);

export const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

/** A tool call's arguments (a JSON string on the wire), indented for reading. */
export function prettyArguments(raw: unknown): string {
  if (typeof raw !== "string") return JSON.stringify(raw ?? {}, null, 2);
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}
