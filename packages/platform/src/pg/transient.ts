/** SQLSTATEs of a server going away or not accepting connections yet (class 08, and 57P01–57P03). */
const TRANSIENT_SQLSTATE = /^(08...|57P0[123]|53300)$/;
const TRANSIENT_NET = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);
const TRANSIENT_MESSAGE = /Connection terminated|connection error|timeout exceeded when trying to connect|Client was closed|not queryable/i;

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
