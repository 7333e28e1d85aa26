import pg from "pg";

/**
 * Asks the server to cancel what backend `pid` is running, over a connection of its own (the busy one
 * cannot speak). The reader role may signal its own backends; a failure is swallowed because the caller
 * also drops the busy connection, and the role's client_connection_check_interval ends the query then.
 */
export async function cancelBackend(connectionString: string, pid: number): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: "steward-dataset-cancel", connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("SELECT pg_cancel_backend($1)", [pid]);
  } catch {
    // best effort, see above
  } finally {
    await client.end().catch(() => undefined);
  }
}
