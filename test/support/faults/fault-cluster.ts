import { randomBytes } from "node:crypto";
import pg from "pg";
import { ensureDatabase, migrate } from "@steward/store";
import { connectNats, type NatsConnection } from "@steward/platform";
import { startPrivatePostgres, execSql, type PrivatePostgres } from "./private-postgres";
import { startPrivateNats, type PrivateNats } from "./private-nats";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy";

/**
 * One test file's own PostgreSQL and nats-server, each behind a TCP proxy. The services connect through the
 * proxies (so a test can make a server unreachable without stopping it); the suite's own checks connect
 * straight to the servers, so they keep working while the services are cut off.
 */
export interface FaultCluster {
  readonly pg: PrivatePostgres;
  readonly nats: PrivateNats;
  readonly pgProxy: TcpProxy;
  readonly natsProxy: TcpProxy;
  /** A fresh database (a copy of the migrated template): `url` through the proxy for services, `directUrl` for checks. */
  freshDatabase(): Promise<{ name: string; url: string; directUrl: string }>;
  /** The NATS URL the services use (through the proxy). */
  readonly servicesNatsUrl: string;
  /**
   * A new connection of the suite's own, straight to nats-server; the caller closes it. Fresh per use, so a
   * check after a NATS fault never rides on a connection that lived through it.
   */
  connectNats(): Promise<NatsConnection>;
  teardown(): Promise<void>;
}

const TEMPLATE = "steward_fault_template";

export async function startFaultCluster(): Promise<FaultCluster> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const teardown = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    cleanups.length = 0;
  };
  try {
    const [postgres, nats] = await Promise.all([startPrivatePostgres(), startPrivateNats()]);
    cleanups.push(
      () => postgres.teardown(),
      () => nats.teardown(),
    );
    const pgProxy = await startTcpProxy({ port: postgres.port });
    cleanups.push(() => pgProxy.close());
    const natsProxy = await startTcpProxy({ port: nats.port });
    cleanups.push(() => natsProxy.close());
    // Migrate once; every test copies the template (CREATE DATABASE … TEMPLATE is a file copy, far faster).
    await ensureDatabase(postgres.url(TEMPLATE));
    await migrate(postgres.url(TEMPLATE));
    return {
      pg: postgres,
      nats,
      pgProxy,
      natsProxy,
      servicesNatsUrl: `nats://127.0.0.1:${natsProxy.port}`,
      async freshDatabase() {
        const name = `steward_fault_${randomBytes(5).toString("hex")}`;
        await execSql(postgres.url(), `CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
        return { name, url: `postgres://postgres@127.0.0.1:${pgProxy.port}/${name}`, directUrl: postgres.url(name) };
      },
      connectNats: () => connectNats(nats.url, "steward-fault-suite"),
      teardown,
    };
  } catch (err) {
    await teardown();
    throw err;
  }
}

/** A pool straight to the private server, for the suite's checks. */
export function checkPool(directUrl: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: directUrl, max: 3 });
  // The suite's own connections die with a server restart too; the next query opens a new one.
  pool.on("error", () => undefined);
  return pool;
}

/**
 * The file's own PostgreSQL and NATS (behind their proxies), started before its tests and torn down after
 * them; returns a getter, valid inside the tests.
 */
export function useFaultCluster(): () => FaultCluster {
  let cluster: FaultCluster | undefined;
  beforeAll(async () => {
    cluster = await startFaultCluster();
  }, 120_000);
  afterAll(async () => {
    await cluster?.teardown();
  });
  return () => {
    if (!cluster) throw new Error("the fault cluster did not start");
    return cluster;
  };
}
