import { BadRequestError } from "@steward/platform";
import type { RunStatus } from "@steward/contract";
import type { AdminRunFilter } from "@steward/store";
import { pageOf } from "./page";

/**
 * The query of GET /v1/admin/runs as the route's schema let it through (docs/admin-runs.md): known keys only,
 * each at most once, page numbers, states, codes, user names and thread ids already in shape. Times are text.
 */
export interface AdminRunQuery {
  readonly page?: string;
  readonly page_size?: string;
  readonly user?: string;
  readonly state?: RunStatus;
  readonly code?: string;
  readonly created_after?: string;
  readonly created_before?: string;
  readonly thread_id?: string;
}

/** What a list request asks for: the filter, the page, and the query as understood (for its audit record). */
export interface AdminRunListing {
  readonly filter: AdminRunFilter;
  readonly page: number;
  readonly pageSize: number;
  /** The filters and page in the API's words, times in their canonical form: what the audit record keeps. */
  readonly understood: Readonly<Record<string, string | number>>;
}

/** A date, or a date and time with seconds, an optional fraction of up to six digits and a zone (RFC 3339). */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|([+-])(\d{2}):(\d{2})))?$/;

const daysIn = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/**
 * An instant of a time filter, as ISO-8601 UTC with six fractional digits. A date alone is that day's start in
 * UTC; a time must name its zone (`Z` or an offset): a local time is ambiguous. Anything else is 400 / 10001.
 */
export function parseInstant(key: string, text: string): string {
  const bad = () => new BadRequestError(`${key} must be an ISO-8601 date (2026-12-01) or date and time with a zone (2026-12-01T09:00:00Z)`);
  const m = INSTANT.exec(text);
  if (!m) throw bad();
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const offsetMinutes = m[9] ? (m[9] === "-" ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11])) : 0;
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) throw bad();
  if (hour > 23 || minute > 59 || second > 59 || (m[10] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59))) throw bad();
  const at = new Date(0);
  // setUTCFullYear, unlike Date.UTC, takes years 1-99 as they are.
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hour, minute - offsetMinutes, second, 0);
  const utcYear = at.getUTCFullYear();
  if (utcYear < 1 || utcYear > 9999) throw bad();
  return `${at.toISOString().slice(0, 19)}.${(m[7] ?? "").padEnd(6, "0")}Z`;
}

/**
 * The filter and page of GET /v1/admin/runs. Creation time is the half-open range [created_after, created_before):
 * adjacent ranges neither overlap nor leave a gap. A range that holds no instant is 400 / 10001.
 */
export function parseAdminRunQuery(query: AdminRunQuery): AdminRunListing {
  const createdAfter = query.created_after === undefined ? undefined : parseInstant("created_after", query.created_after);
  const createdBefore = query.created_before === undefined ? undefined : parseInstant("created_before", query.created_before);
  if (createdAfter !== undefined && createdBefore !== undefined && createdAfter >= createdBefore) {
    throw new BadRequestError("created_after must be earlier than created_before");
  }
  const filter: AdminRunFilter = {
    ...(query.user !== undefined ? { user: query.user } : {}),
    ...(query.state !== undefined ? { state: query.state } : {}),
    ...(query.code !== undefined ? { code: Number(query.code) } : {}),
    ...(createdAfter !== undefined ? { createdAfter } : {}),
    ...(createdBefore !== undefined ? { createdBefore } : {}),
    ...(query.thread_id !== undefined ? { threadId: query.thread_id } : {}),
  };
  const { page, pageSize } = pageOf(query);
  const understood: Record<string, string | number> = {
    ...(filter.user !== undefined ? { user: filter.user } : {}),
    ...(filter.state !== undefined ? { state: filter.state } : {}),
    ...(filter.code !== undefined ? { code: filter.code } : {}),
    ...(createdAfter !== undefined ? { created_after: createdAfter } : {}),
    ...(createdBefore !== undefined ? { created_before: createdBefore } : {}),
    ...(filter.threadId !== undefined ? { thread_id: filter.threadId } : {}),
    page,
    page_size: pageSize,
  };
  return { filter, page, pageSize, understood };
}

/** The page of GET /v1/audit/admin-reads and its filters, in the API's words. */
export function parseAdminReadQuery(query: { page?: string; page_size?: string; user?: string; run_id?: string }): {
  readonly filter: { user?: string; runId?: string };
  readonly page: number;
  readonly pageSize: number;
} {
  return {
    filter: { ...(query.user !== undefined ? { user: query.user } : {}), ...(query.run_id !== undefined ? { runId: query.run_id } : {}) },
    ...pageOf(query),
  };
}
