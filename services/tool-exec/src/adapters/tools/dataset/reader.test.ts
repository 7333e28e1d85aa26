import pg from "pg";
import { freshDatabase, loadDemoDataset } from "../../../../../../test/support/databases";
import { defaultDatasetUrl } from "./default-url";
import { classify, DatasetQueryError } from "./errors";
import { createDatasetReader, type DatasetReader } from "./reader";
import { waitFor } from "../../../../../../test/support/wait-for";

async function withClient<T>(connectionString: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "ran",
    (err: unknown) => (err instanceof DatasetQueryError ? err.code : `other: ${(err as Error).message}`),
  );

describe("the dataset reader: one statement, its own database, a bounded role, cancellable", () => {
  let app: { url: string; drop(): Promise<void> };
  let readerUrl: string;
  let reader: DatasetReader;

  beforeAll(async () => {
    app = await freshDatabase("steward_dataset_reader");
    readerUrl = defaultDatasetUrl(app.url);
    await loadDemoDataset(app.url);
    // The application database has rows the reader must never learn about.
    await withClient(app.url, (c) => c.query("ANALYZE"));
    reader = createDatasetReader(readerUrl, "demo_data", { rowLimit: 50, timeoutMs: 20_000 });
  });

  afterAll(async () => {
    await reader?.close();
    await app?.drop();
  });

  const activeSleeps = () =>
    withClient(
      app.url,
      async (c) =>
        (
          await c.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query ILIKE '%pg_sleep%' AND pid <> pg_backend_pid()",
            [new URL(readerUrl).pathname.slice(1)],
          )
        ).rows[0].n as number,
    );

  it("reads the dataset", async () => {
    const r = await reader.select("select country, count(*) as n from customers group by country order by country;");
    expect(r.rows).toEqual(expect.arrayContaining([{ country: "UK", n: "2" }]));
    expect(await reader.explain("select * from orders -- trailing comment")).toEqual(expect.objectContaining({ planRows: expect.any(Number) }));
  });

  it("refuses the reported escape and other second statements with QUERY_NOT_ALLOWED, running none of them", async () => {
    const started = Date.now();
    expect(await codeOf(reader.select("select 1) a; commit; select pg_sleep(12); select * from (select 1"))).toBe("QUERY_NOT_ALLOWED");
    expect(await codeOf(reader.explain("select 1) a; commit; select pg_sleep(12); select * from (select 1"))).toBe("QUERY_NOT_ALLOWED");
    expect(await codeOf(reader.select("select 1) a; create temp table t as select 1; select * from (select 1"))).toBe("QUERY_NOT_ALLOWED");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await activeSleeps()).toBe(0);
  });

  it("sends the statement with the extended protocol, so the server itself refuses a second statement", async () => {
    // Past our own check: what the server answers to the wrapped escape sent as the reader sends it.
    const err = await withClient(readerUrl, (c) =>
      c.query("SELECT * FROM (select 1) a; commit; select pg_sleep(12); select * from (select 1\n) AS q LIMIT $1", [1]).then(
        () => null,
        (e: unknown) => e,
      ),
    );
    expect(classify(err).code).toBe("QUERY_NOT_ALLOWED");
  });

  it("keeps the application's tables out of sight: no login to its database, no rows or counts in the catalogue", async () => {
    const appAsReader = new URL(app.url);
    appAsReader.username = "steward_reader";
    const login = await withClient(appAsReader.toString(), async () => "connected").catch((e: { code?: string }) => e.code);
    expect(login).toBe("42501");
    const seen = await reader.select(
      "select relname from pg_class where relname in ('events', 'runs', 'policy_decisions') union all select relname from pg_stat_all_tables where relname in ('events', 'runs', 'policy_decisions')",
    );
    expect(seen.rows).toEqual([]);
    expect(await codeOf(reader.select("select datname, tup_inserted from pg_stat_database"))).toBe("QUERY_NOT_ALLOWED");
  });

  it("gives no temporary tables and no notifications", async () => {
    const temp = await withClient(readerUrl, (c) =>
      c.query("CREATE TEMP TABLE t (x int)").then(
        () => "created",
        (e: { code?: string }) => e.code,
      ),
    );
    expect(temp).toBe("42501");
    expect(await codeOf(reader.select("select pg_notify('steward_outbox', 'x')"))).toBe("QUERY_NOT_ALLOWED");
  });

  it("bounds the role itself: statement and idle-in-transaction timeouts hold without any SET of ours", async () => {
    const settings = await withClient(
      readerUrl,
      async (c) => (await c.query("SELECT current_setting('statement_timeout') AS st, current_setting('idle_in_transaction_session_timeout') AS idle")).rows[0],
    );
    expect(settings).toEqual({ st: "30s", idle: "10s" });
    expect((await reader.select("select current_setting('statement_timeout') as st")).rows).toEqual([{ st: "20s" }]);
    const generous = createDatasetReader(readerUrl, "demo_data", { rowLimit: 5, timeoutMs: 600_000 });
    try {
      // Our setting may lower the role's timeout, never raise it.
      expect((await generous.select("select current_setting('statement_timeout') as st")).rows).toEqual([{ st: "30s" }]);
    } finally {
      await generous.close();
    }
    const short = createDatasetReader(readerUrl, "demo_data", { rowLimit: 5, timeoutMs: 200 });
    try {
      expect(await codeOf(short.select("select pg_sleep(5)"))).toBe("QUERY_TIMEOUT");
    } finally {
      await short.close();
    }
  });

  it("stops the query when the call is cancelled", async () => {
    const call = new AbortController();
    const running = codeOf(reader.select("select pg_sleep(60)", call.signal));
    await waitFor(async () => ((await activeSleeps()) === 1 ? true : undefined), { timeoutMs: 10_000, what: "the sleep to run" });
    call.abort();
    expect(await running).toBe("QUERY_CANCELLED");
    await waitFor(async () => ((await activeSleeps()) === 0 ? true : undefined), { timeoutMs: 5000, what: "the cancelled sleep to be gone" });
  });
});
