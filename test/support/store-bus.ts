import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { busNames, type BusNames } from "@steward/contract";
import { connectNats, createPool, provisionTopology, type NatsConnection, type Pool } from "@steward/platform";
import { freshDatabase, freshNamespace, natsUrl } from "./databases";

/** A migrated database of the test file's own with a pool on it, and NATS with the topology of a namespace of its own. */
export interface StoreAndBus {
  readonly pool: Pool;
  readonly url: string;
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly namespace: string;
  readonly names: BusNames;
  /** Run at the end of the file, last registered first, before the streams, the connections and the database go. */
  atEnd(cleanup: () => Promise<unknown>): void;
}

/**
 * The store and the bus for the test file that calls this (its beforeAll / afterAll hooks are registered here):
 * a fresh database, a pool of `poolMax`, a NATS connection and the namespace's streams, all removed at the end.
 * Read the connections inside tests and hooks, not at the top level.
 */
export function useStoreAndBus(label: string, options: { namespacePrefix: string; poolMax?: number }): StoreAndBus {
  const namespace = freshNamespace(options.namespacePrefix);
  const names = busNames(namespace);
  const cleanups: Array<() => Promise<unknown>> = [];
  let db: { url: string; drop(): Promise<void> } | undefined;
  let pool: Pool | undefined;
  let nc: NatsConnection | undefined;
  let jsm: JetStreamManager | undefined;

  beforeAll(async () => {
    db = await freshDatabase(`steward_${label}`);
    pool = createPool(db.url, { max: options.poolMax ?? 6 });
    nc = await connectNats(natsUrl, `steward-${label}-test`);
    jsm = await jetstreamManager(nc);
    await provisionTopology(nc, names);
  });

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    for (const stream of [names.commandStream, names.eventStream, names.deadLetterStream]) await jsm?.streams.delete(stream).catch(() => undefined);
    await nc?.close().catch(() => undefined);
    await pool?.end().catch(() => undefined);
    await db?.drop();
  });

  const made = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the store and the bus are made in beforeAll");
    return value;
  };
  return {
    get pool() {
      return made(pool);
    },
    get url() {
      return made(db).url;
    },
    get nc() {
      return made(nc);
    },
    get jsm() {
      return made(jsm);
    },
    namespace,
    names,
    atEnd: (cleanup) => void cleanups.push(cleanup),
  };
}
