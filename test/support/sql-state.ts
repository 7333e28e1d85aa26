import pg from "pg";

/** The SQLSTATE of `sql` run over its own connection to `url` (a service's role, say), or "ok". */
export async function sqlStateOf(url: string, sql: string): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, query_timeout: 10_000 });
  await client.connect();
  try {
    await client.query(sql);
    return "ok";
  } catch (err) {
    return (err as { code: string }).code;
  } finally {
    await client.end();
  }
}
