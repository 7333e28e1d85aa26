import type { QueryConfig } from "pg";

const declared = new Map<string, string>();

/**
 * A statement on a hot path, prepared once per connection: node-postgres sends its text and PostgreSQL parses
 * and plans it on a connection's first use only; later calls send the name and the values. Worth it for a long
 * statement run per step or per request (the run append's text is ~2.5 KB of CTEs); a statement run rarely
 * gains nothing and keeps a plan on every connection. A name stands for one text in the whole process:
 * declaring it again with another text throws, at load.
 */
export function preparedStatement(name: string, text: string): (values: unknown[]) => QueryConfig {
  const known = declared.get(name);
  if (known !== undefined && known !== text) throw new Error(`prepared statement ${name} declared twice with different texts`);
  declared.set(name, text);
  return (values) => ({ name, text, values });
}
