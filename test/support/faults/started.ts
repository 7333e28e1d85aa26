/** Starts a private server; one that fails to start is torn down (its temporary files removed) before the error. */
export async function started<T extends { start(): Promise<void>; teardown(): Promise<void> }>(server: T): Promise<T> {
  try {
    await server.start();
  } catch (err) {
    await server.teardown();
    throw err;
  }
  return server;
}
