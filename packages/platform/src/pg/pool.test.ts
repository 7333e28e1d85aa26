import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { createPool, inTransaction, type Pool } from "./pool";
import { isQueryTimeout } from "./transient";
import { serverUrl } from "../../../../test/support/databases";

/**
 * A TCP relay to PostgreSQL that can go silent: while frozen it forwards nothing and closes nothing, as a cut
 * network looks to both ends (the sockets stay open; no answer ever comes).
 */
async function silentRelay(target: URL): Promise<{ url: string; freeze(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => sockets.delete(s));
    }
    client.on("data", (d) => void (frozen || upstream.write(d)));
    upstream.on("data", (d) => void (frozen || client.write(d)));
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    freeze: () => void (frozen = true),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("createPool on a connection that goes silent mid-statement", () => {
  let relay: Awaited<ReturnType<typeof silentRelay>>;
  let direct: Pool;
  let pool: Pool;

  beforeAll(async () => {
    relay = await silentRelay(new URL(serverUrl));
    pool = createPool(relay.url, { max: 2, queryTimeoutMs: 300 });
  });

  afterAll(async () => {
    await pool.end();
    await relay.close();
  });

  it("fails the statement after the query timeout and drops the connection, in and out of a transaction", async () => {
    // Two connections open and idle, one for each case below.
    const held = [await pool.connect(), await pool.connect()];
    for (const client of held) client.release();
    expect(pool.idleCount).toBe(2);
    relay.freeze();
    const outside = await pool.query("SELECT 2").catch((err: unknown) => err);
    expect(isQueryTimeout(outside)).toBe(true);
    const inside = await inTransaction(pool, (c) => c.query("SELECT 3")).catch((err: unknown) => err);
    // BEGIN itself gets no answer; the connection is dropped instead of waiting on a ROLLBACK that never ends.
    expect(isQueryTimeout(inside)).toBe(true);
    expect(pool.totalCount).toBe(0);
  });

  it("does not fail a statement that answers within the bound", async () => {
    direct = createPool(serverUrl, { max: 1, queryTimeoutMs: 5000 });
    try {
      await expect(direct.query("SELECT pg_sleep(0.2), 4 AS four")).resolves.toMatchObject({ rows: [{ four: 4 }] });
    } finally {
      await direct.end();
    }
  });
});
