import type { AnyToolDefinition, ToolContext } from "../../domain/tool";
import type { DatasetAccess } from "./dataset/access";
import type { DatasetReader } from "./dataset/reader";
import { createDatasetReaders } from "./dataset/readers";
import { datasetTools } from "./dataset-tools";

/**
 * Given grants per tenant and the run's focus (an in-memory DatasetAccess) and readers that record what they are
 * asked, when the model calls a data tool, then it acts on the run's focused, granted dataset only.
 */
describe("the data tools act on a dataset the tenant grants, the run's focused one only", () => {
  const grants: Record<string, string[]> = { acme: ["demo", "retired"], globex: ["ledger"] };
  const focus = new Map<string, { tenantId: string; dataset: string }>();
  const access: DatasetAccess = {
    granted: async (tenantId) => grants[tenantId] ?? [],
    focus: async (f) => void focus.set(f.runId, { tenantId: f.tenantId, dataset: f.dataset }),
    focused: async (runId, tenantId) => {
      const f = focus.get(runId);
      return f && f.tenantId === tenantId ? { dataset: f.dataset, allowed: (grants[tenantId] ?? []).includes(f.dataset) } : null;
    },
  };
  const opened: string[] = [];
  const asked: Array<[string, string]> = [];
  const fakeReader = (name: string, schema: string): DatasetReader => ({
    schema,
    catalog: async () => {
      asked.push([name, "catalog"]);
      return [{ table: `${name}_table`, approx_rows: 1 }];
    },
    select: async (sql) => {
      asked.push([name, sql]);
      return { columns: ["dataset"], rows: [{ dataset: name }], truncated: false };
    },
    explain: async () => ({ totalCost: 1, planRows: 1 }),
    close: async () => undefined,
  });
  // "retired" is granted to acme but not configured here; "ledger" is globex's.
  const readers = createDatasetReaders(
    [
      { name: "demo", url: "postgres://r@h/demo", schema: "demo_data", description: "A small shop" },
      { name: "ledger", url: "postgres://r@h/ledger", schema: "ledger" },
    ],
    { rowLimit: 10, timeoutMs: 1000 },
    (config) => {
      opened.push(config.name);
      return fakeReader(config.name, config.schema);
    },
  );
  const tools = new Map(datasetTools({ access, readers }).map((t) => [t.name, t] as [string, AnyToolDefinition]));
  const ctx = (runId: string, tenantId: string, stepNo = 1): ToolContext => ({
    runId,
    tenantId,
    userId: "mo",
    stepNo,
    signal: new AbortController().signal,
    remainingMs: 1000,
  });
  const call = (name: string, c: ToolContext, input: unknown = {}) => tools.get(name)!.run(c, input);

  beforeEach(() => {
    opened.length = 0;
    asked.length = 0;
  });

  it("lists only what the tenant grants and this deployment configures, with descriptions", async () => {
    expect(await call("focus_dataset", ctx("r-acme", "acme"))).toEqual({
      result: { available: [{ name: "demo", description: "A small shop" }], note: "call focus_dataset with one of these names" },
    });
    expect((await call("focus_dataset", ctx("r-globex", "globex"))).result).toMatchObject({ available: [{ name: "ledger" }] });
    expect((await call("focus_dataset", ctx("r-none", "initech"))).result).toEqual({ available: [], note: "no dataset is available to you in this tenant" });
    expect(opened).toEqual([]);
  });

  it("refuses another tenant's dataset, or a name nobody has, alike with DATASET_NOT_ALLOWED, and never opens it", async () => {
    for (const name of ["ledger", " LEDGER ", "nope"]) {
      const refused = await call("focus_dataset", ctx("r-acme", "acme"), { dataset: name });
      expect(refused).toEqual({
        resultCode: "DATASET_NOT_ALLOWED",
        result: {
          error_code: "DATASET_NOT_ALLOWED",
          note: `no dataset "${name.trim().toLowerCase()}" is available to you in this tenant`,
          available: [{ name: "demo", description: "A small shop" }],
        },
      });
      expect(refused.nextState).toBeUndefined();
    }
    expect(focus.has("r-acme")).toBe(false);
    expect(opened).toEqual([]);
  });

  it("a granted dataset this deployment does not configure answers DATASET_UNAVAILABLE", async () => {
    expect(await call("focus_dataset", ctx("r-acme", "acme"), { dataset: "retired" })).toMatchObject({ resultCode: "DATASET_UNAVAILABLE" });
    expect(focus.has("r-acme")).toBe(false);
  });

  it("before any focus, the data tools answer DATASET_NOT_FOCUSED and read nothing", async () => {
    for (const [name, input] of [
      ["list_tables", {}],
      ["describe_table", { table: "orders" }],
      ["validate_query", { sql: "select 1" }],
      ["run_query", { sql: "select 1" }],
    ] as const) {
      expect([name, (await call(name, ctx("r-fresh", "acme"), input)).resultCode]).toEqual([name, "DATASET_NOT_FOCUSED"]);
    }
    expect([opened, asked]).toEqual([[], []]);
  });

  it("a focus moves the run to the focused state; later calls read that dataset; a run of another tenant cannot borrow it", async () => {
    expect(await call("focus_dataset", ctx("r-acme", "acme"), { dataset: " Demo " })).toEqual({
      result: { focused: "demo", name: "demo", description: "A small shop" },
      nextState: "focused",
    });
    expect((await call("list_tables", ctx("r-acme", "acme", 2))).result).toEqual({ tables: [{ table: "demo_table", approx_rows: 1 }] });
    expect((await call("run_query", ctx("r-acme", "acme", 3), { sql: "select 1" })).result).toMatchObject({ rows: [{ dataset: "demo" }] });
    // The same run id named with globex: no focus there.
    expect((await call("run_query", ctx("r-acme", "globex", 4), { sql: "select 1" })).resultCode).toBe("DATASET_NOT_FOCUSED");
    expect(opened).toEqual(["demo"]);
    expect(asked.map(([name]) => name)).toEqual(["demo", "demo"]);
  });

  it("a refused focus leaves the run's focus where it was", async () => {
    expect((await call("focus_dataset", ctx("r-acme", "acme", 5), { dataset: "ledger" })).resultCode).toBe("DATASET_NOT_ALLOWED");
    expect((await call("run_query", ctx("r-acme", "acme", 6), { sql: "select 1" })).result).toMatchObject({ rows: [{ dataset: "demo" }] });
    expect(opened).not.toContain("ledger");
  });

  it("a grant revoked after the focus stops the run's next data call with DATASET_NOT_ALLOWED", async () => {
    grants.acme = ["retired"];
    try {
      for (const name of ["list_tables", "run_query"]) {
        expect((await call(name, ctx("r-acme", "acme", 7), { sql: "select 1" })).resultCode).toBe("DATASET_NOT_ALLOWED");
      }
      expect(asked).toEqual([]);
    } finally {
      grants.acme = ["demo", "retired"];
    }
  });

  it("is offered to the runner as idempotent (sent again after a crash) but never answered from a stored result", () => {
    for (const tool of tools.values()) expect([tool.name, tool.idempotent, tool.reuseResult]).toEqual([tool.name, true, false]);
  });
});
