/** SQLSTATEs of a server going away or not accepting connections yet (class 08, and 57P01–57P03). */
const TRANSIENT_SQLSTATE = /^(08...|57P0[123]|53300)$/;
const TRANSIENT_NET = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
const TRANSIENT_MESSAGE = /Connection terminated|connection error|timeout exceeded when trying to connect|Client was closed|not queryable|Query read timeout/i;

/** pg's own words when a statement got no answer within the pool's query timeout (see createPool). */
const QUERY_TIMEOUT_MESSAGE = "Query read timeout";

/**
 * True when a statement got no answer in time: the server may be paused or the connection dead (a cut
 * network leaves the socket open and silent). The connection is unusable either way: its answer, if one
 * ever comes, would be read as the answer to the next statement's.
 */
export function isQueryTimeout(err: unknown): boolean {
  return !!err && typeof err === "object" && (err as { message?: unknown }).message === QUERY_TIMEOUT_MESSAGE;
}

/**
 * True when the error says PostgreSQL could not be reached or went away mid-statement, as opposed to a
 * statement that failed on its merits. Such work may be tried again once the server answers.
 */
export function isPostgresUnavailable(err: unknown): boolean {
  if (!err || typeof err !== "object") return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (TRANSIENT_SQLSTATE.test(code) || TRANSIENT_NET.has(code))) return true;
  const message = (err as { message?: unknown }).message;
  return typeof message === "string" && TRANSIENT_MESSAGE.test(message);
}
