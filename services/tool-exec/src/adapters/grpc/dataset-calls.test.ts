import { randomUUID } from "node:crypto";
import { bindGrpc, createLogger, createPool, grpc, shutdownGrpc, type Pool } from "@steward/platform";
import { createToolExecApi, type InvokeRequest, ToolExecClient, type PolicyDecisionApi, type ToolExecApi } from "@steward/proto";
import { dropDatabase, ensureDatabase, grantDataset, parseDatasetTenants } from "@steward/store";
import { createToolExecGrpcServer } from "./server";
import { createInvokeHandler, type InvokeCommand, type InvokeOutcome } from "../../app/invoke-tool";
import { createToolRegistry } from "../../domain/registry";
import { createPgIdempotencyStore } from "../pg/idempotency-store";
import { datasetTools } from "../tools/dataset-tools";
import { createPgDatasetAccess } from "../tools/dataset/access";
import { parseDatasets } from "../tools/dataset/catalog";
import { createDatasetReader } from "../tools/dataset/reader";
import { createDatasetReaders } from "../tools/dataset/readers";
import { asDatasetReader, datasetsUrl, freshDatabase, loadDemoDataset, loadLedgerDataset } from "../../../../../test/support/databases";
import { waitFor } from "../../../../../test/support/wait-for";

/**
 * ToolExec.Invoke over real gRPC, on real PostgreSQL with two datasets in two databases: the run's focus decides
 * which one a call reads, a tenant reaches only the datasets it is granted, and a cancelled call stops its query.
 * The PDP is a stand-in that permits every call (the PDP's own behaviour is the policy service's suites').
 */
describe("the data tools over ToolExec.Invoke: per-tenant datasets and cancellation", () => {
  let app: { url: string; drop(): Promise<void> };
  let ledgerUrl: string;
  let pool: Pool;
  let server: grpc.Server;
  let api: ToolExecApi;
  let raw: ToolExecClient;
  let closeReaders: () => Promise<void>;
  const opened: string[] = [];
  const outcomes: Array<{ cmd: InvokeCommand; outcome: Promise<InvokeOutcome> }> = [];
  const logger = createLogger("tool-exec", "silent");
  const permitAll: PolicyDecisionApi = {
    decide: async () => ({ permit: true, code: "", reasons: ["permitted by a stand-in"], policyIds: ["stand-in"] }),
    state: () => "ready",
    close: () => undefined,
  };

  beforeAll(async () => {
    app = await freshDatabase("steward_tool_exec_datasets");
    await loadDemoDataset(app.url);
    ledgerUrl = `${app.url}_ledger`;
    await ensureDatabase(ledgerUrl);
    await loadLedgerDataset(ledgerUrl);
    pool = createPool(app.url, { max: 4 });
    await grantDataset(pool, "acme", "demo", [], { userId: "root" });
    await grantDataset(pool, "globex", "ledger", [], { userId: "root" });
    await grantDataset(pool, "initech", "demo", [], { userId: "root" });
    await grantDataset(pool, "initech", "ledger", [], { userId: "root" });
    // A tenant's own grant of a dataset the operator does not list for it (as an administrator could once make).
    await grantDataset(pool, "umbrella", "ledger", [], { userId: "root" });

    const listed = parseDatasetTenants(JSON.stringify({ demo: ["acme", "initech"], ledger: ["globex", "initech"] }));
    const datasets = parseDatasets(
      { DATASETS: JSON.stringify({ demo: { schema: "demo_data" }, ledger: { url: asDatasetReader(ledgerUrl), schema: "ledger_data" } }) },
      app.url,
    );
    const readers = createDatasetReaders(datasets, { rowLimit: 50, timeoutMs: 20_000 }, (config, limits) => {
      opened.push(config.name);
      return createDatasetReader(config.url, config.schema, limits);
    });
    closeReaders = () => readers.close();
    const registry = createToolRegistry(datasetTools({ access: createPgDatasetAccess(pool, listed), readers }));
    const handler = createInvokeHandler({ registry, pdp: permitAll, results: createPgIdempotencyStore(pool), logger });
    const recorded = (cmd: InvokeCommand) => {
      const outcome = handler(cmd);
      outcomes.push({ cmd, outcome });
      return outcome;
    };
    server = createToolExecGrpcServer({ registry, invoke: recorded, logger });
    const port = await bindGrpc(server, "127.0.0.1:0");
    api = createToolExecApi(`127.0.0.1:${port}`);
    raw = new ToolExecClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    api?.close();
    raw?.close();
    if (server) await shutdownGrpc(server, 2000);
    await closeReaders?.();
    await pool?.end();
    await dropDatabase(ledgerUrl).catch(() => undefined);
    await app?.drop();
  });

  const request = (runId: string, tenantId: string, stepNo: number, toolName: string, args: unknown = {}): InvokeRequest => ({
    runId,
    tenantId,
    userId: "mo",
    stepNo,
    callId: `c${stepNo}`,
    toolName,
    argumentsJson: JSON.stringify(args),
    elevationSessionId: "",
  });
  const invoke = async (...args: Parameters<typeof request>) => {
    const r = await api.invoke(request(...args), { deadlineMs: 20_000 });
    return { code: r.resultCode, result: JSON.parse(r.resultJson).result, nextState: r.nextState, replayed: r.replayed };
  };
  const tablesOf = async (runId: string, tenantId: string, stepNo: number) =>
    (await invoke(runId, tenantId, stepNo, "list_tables")).result.tables.map((t: { table: string }) => t.table);
  const activeSleeps = async () => {
    const { rows } = await pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query ILIKE '%pg_sleep%' AND pid <> pg_backend_pid()",
      [new URL(datasetsUrl(app.url)).pathname.slice(1)],
    );
    return rows[0].n;
  };

  it("tenant A's run can neither focus nor query tenant B's dataset, which is never even connected to", async () => {
    const run = randomUUID();
    const refused = await invoke(run, "acme", 1, "focus_dataset", { dataset: "ledger" });
    expect(refused).toMatchObject({ code: "DATASET_NOT_ALLOWED", nextState: "", result: { available: [{ name: "demo" }] } });
    expect((await invoke(run, "acme", 2, "focus_dataset")).result.available).toEqual([{ name: "demo" }]);
    expect((await invoke(run, "acme", 3, "run_query", { sql: "select * from accounts" })).code).toBe("DATASET_NOT_FOCUSED");
    expect(await invoke(run, "acme", 4, "focus_dataset", { dataset: "demo" })).toMatchObject({ code: "ok", nextState: "focused" });
    // Its own dataset's connection cannot name the other database's tables.
    const across = await invoke(run, "acme", 5, "run_query", { sql: "select * from ledger_data.accounts" });
    expect(across).toMatchObject({ code: "QUERY_INVALID", result: { note: expect.stringContaining("does not exist") } });
    expect(opened).toEqual(["demo"]);
    // The same run id, named with globex's tenant: globex's focus is its own, and the call reads nothing of acme's.
    expect((await invoke(run, "globex", 6, "run_query", { sql: "select count(*) as n from orders" })).code).toBe("DATASET_NOT_FOCUSED");
    // The ledger works, for the tenant it is granted to.
    const globexRun = randomUUID();
    expect((await invoke(globexRun, "globex", 1, "focus_dataset", { dataset: "ledger" })).code).toBe("ok");
    expect((await invoke(globexRun, "globex", 2, "run_query", { sql: "select owner from accounts order by id" })).result.rows).toEqual([
      { owner: "Globex treasury" },
      { owner: "Globex payroll" },
    ]);
    expect(opened).toEqual(["demo", "ledger"]);
  });

  it("a tenant's own grant of a dataset the operator does not list for it admits nobody: refused as a name that does not exist", async () => {
    const run = randomUUID();
    const before = [...opened];
    expect((await invoke(run, "umbrella", 1, "focus_dataset")).result).toMatchObject({ available: [] });
    const listedElsewhere = await invoke(run, "umbrella", 2, "focus_dataset", { dataset: "ledger" });
    const unknown = await invoke(run, "umbrella", 3, "focus_dataset", { dataset: "nosuch" });
    expect([listedElsewhere.code, unknown.code]).toEqual(["DATASET_NOT_ALLOWED", "DATASET_NOT_ALLOWED"]);
    expect(listedElsewhere.result).toEqual({ ...unknown.result, note: (unknown.result.note as string).replace("nosuch", "ledger") });
    expect((await invoke(run, "umbrella", 4, "run_query", { sql: "select 1" })).code).toBe("DATASET_NOT_FOCUSED");
    expect(opened).toEqual(before);
  });

  it("the latest focus wins, also when it repeats an earlier one: focus demo, ledger, demo again", async () => {
    const run = randomUUID();
    await invoke(run, "initech", 1, "focus_dataset", { dataset: "demo" });
    expect(await tablesOf(run, "initech", 2)).toEqual(["customers", "orders", "products"]);
    await invoke(run, "initech", 3, "focus_dataset", { dataset: "ledger" });
    expect(await tablesOf(run, "initech", 4)).toEqual(["accounts"]);
    const again = await invoke(run, "initech", 5, "focus_dataset", { dataset: "demo" });
    expect(again).toMatchObject({ code: "ok", replayed: false });
    expect(await tablesOf(run, "initech", 6)).toEqual(["customers", "orders", "products"]);
  });

  it("a revoked grant stops the run's next query", async () => {
    const run = randomUUID();
    await invoke(run, "initech", 1, "focus_dataset", { dataset: "ledger" });
    await pool.query("DELETE FROM tenant_datasets WHERE tenant_id = 'initech' AND dataset = 'ledger'");
    expect((await invoke(run, "initech", 2, "run_query", { sql: "select 1 as one" })).code).toBe("DATASET_NOT_ALLOWED");
  });

  it("a client's cancel of Invoke cancels the running query on the server: it leaves pg_stat_activity", async () => {
    const run = randomUUID();
    await invoke(run, "acme", 1, "focus_dataset", { dataset: "demo" });
    expect(await activeSleeps()).toBe(0);
    const answered = new Promise<grpc.ServiceError | null>((resolve) => {
      const call = raw.invoke(
        request(run, "acme", 2, "run_query", { sql: "select pg_sleep(60)" }),
        new grpc.Metadata(),
        { deadline: Date.now() + 60_000 },
        (err) => resolve(err),
      );
      void waitFor(async () => ((await activeSleeps()) === 1 ? true : undefined), { timeoutMs: 10_000, what: "the sleep to run" }).then(() => call.cancel());
    });
    expect((await answered)?.code).toBe(grpc.status.CANCELLED);
    const served = outcomes.find((o) => o.cmd.runId === run && o.cmd.toolName === "run_query");
    expect((await served!.outcome).resultCode).toBe("QUERY_CANCELLED");
    await waitFor(async () => ((await activeSleeps()) === 0 ? true : undefined), { timeoutMs: 5000, what: "the cancelled sleep to be gone" });
  });
});
