import { DatasetQueryError, oneStatementOnly } from "./errors";

/** Index after the quoted run that starts at `i` and ends with `close` (doubled `close` escapes it). */
function skipQuoted(sql: string, i: number, close: string, backslashes: boolean): number {
  let j = i + 1;
  while (j < sql.length) {
    if (backslashes && sql[j] === "\\") j += 2;
    else if (sql[j] === close && sql[j + 1] === close) j += 2;
    else if (sql[j] === close) return j + 1;
    else j++;
  }
  return j;
}

function skipBlockComment(sql: string, i: number): number {
  let depth = 0;
  let j = i;
  while (j < sql.length) {
    if (sql.startsWith("/*", j)) {
      depth++;
      j += 2;
    } else if (sql.startsWith("*/", j)) {
      depth--;
      j += 2;
      if (depth === 0) return j;
    } else j++;
  }
  return j;
}

/** Index after the `$tag$ … $tag$` run at `i`, or `i + 1` when `$` starts no dollar quote (`$1`, `a$b`). */
function skipDollarQuoted(sql: string, i: number): number {
  const tag = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i))?.[0];
  if (!tag || /[\w$]/.test(sql[i - 1] ?? "")) return i + 1;
  const end = sql.indexOf(tag, i + tag.length);
  return end < 0 ? sql.length : end + tag.length;
}

/** True for an E'…' string, where a backslash escapes the next character. */
const escapeString = (sql: string, i: number): boolean => /(^|[^\w$])[eE]$/.test(sql.slice(0, i));

/** True when `sql` holds a `;` outside strings, quoted names and comments. */
export function hasSeparator(sql: string): boolean {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === ";") return true;
    if (c === "'") i = skipQuoted(sql, i, "'", escapeString(sql, i));
    else if (c === '"') i = skipQuoted(sql, i, '"', false);
    else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === "/" && sql[i + 1] === "*") i = skipBlockComment(sql, i);
    else if (c === "$") i = skipDollarQuoted(sql, i);
    else i++;
  }
  return false;
}

/**
 * The model's statement, checked before anything runs: trailing semicolons dropped, then it must be one
 * SELECT (or WITH … / VALUES / TABLE). The server's extended protocol refuses a second statement as well;
 * this check only makes the refusal clear and early.
 */
export function singleStatement(sql: string): string {
  const body = sql
    .trim()
    .replace(/(;\s*)+$/, "")
    .trimEnd();
  if (hasSeparator(body)) throw oneStatementOnly();
  if (!/^(select|with|values|table)\b/i.test(body)) throw new DatasetQueryError("QUERY_NOT_ALLOWED", "only a single SELECT query is allowed");
  return body;
}
