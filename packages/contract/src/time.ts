/**
 * Timestamps travel as ISO-8601 UTC strings with exactly six fractional digits, which is the precision
 * PostgreSQL's timestamptz keeps; a value therefore survives a round trip through the database unchanged.
 */
export type IsoMicros = string;

/** Formats microseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
export function formatMicros(micros: bigint): IsoMicros {
  const millis = micros / 1000n;
  const base = new Date(Number(millis)).toISOString().slice(0, 19);
  const fraction = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  return `${base}.${fraction.toString().padStart(6, "0")}Z`;
}

/** Parses a timestamp with up to six fractional digits into microseconds since the epoch. */
export function parseMicros(iso: IsoMicros): bigint {
  const match = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (!match) throw new RangeError(`not an ISO UTC timestamp: ${iso}`);
  const seconds = BigInt(Date.parse(`${match[1]}Z`)) / 1000n;
  const fraction = BigInt((match[2] ?? "").padEnd(6, "0"));
  return seconds * 1_000_000n + fraction;
}

/** Adds whole seconds to a timestamp. */
export function addSeconds(iso: IsoMicros, seconds: number): IsoMicros {
  return formatMicros(parseMicros(iso) + BigInt(seconds) * 1_000_000n);
}

/** A clock with microsecond resolution: the wall-clock origin plus the monotonic high-resolution offset. */
export function nowMicros(): IsoMicros {
  const micros = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
  return formatMicros(micros);
}
