import { ValidationError } from "@steward/platform";
import { codePointLength } from "./run-request";

/** A role an administrator grants: a letter or digit, then letters, digits, `_ . : -`; at most 64 characters. */
export const ROLE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** The longest user id or role the membership API addresses, in characters. */
export const NAME_MAX_CHARS = 256;

// NUL and lone surrogates (PostgreSQL cannot store them), and other control characters (no identity holds them).
const UNFIT = /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a user id or a held role can be named at all: 1–256 characters, not only white space, no control
 * characters or lone surrogates. Roles seeded from tokens may be any such text, so revoking accepts it.
 */
export function isNameable(value: string): boolean {
  const n = codePointLength(value);
  return n >= 1 && n <= NAME_MAX_CHARS && value.trim().length > 0 && !UNFIT.test(value);
}

/** The content rules of a grant (422/10430): a user id that can be named, and a role name that fits ROLE_NAME. */
export function checkGrant(userId: string, role: string): void {
  if (!isNameable(userId)) throw new ValidationError(`a user id is 1 to ${NAME_MAX_CHARS} characters, not only white space, without control characters`);
  if (!ROLE_NAME.test(role)) throw new ValidationError("a role is 1 to 64 letters, digits or _ . : -, starting with a letter or digit");
}
