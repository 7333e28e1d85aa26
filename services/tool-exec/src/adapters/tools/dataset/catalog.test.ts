import { ConfigError } from "@steward/platform";
import { parseDatasetTenants } from "@steward/store";
import { parseDatasets, unservedDatasets } from "./catalog";

const app = "postgres://steward_tool_exec:pw@db.internal:5432/steward";
const problem = (vars: Parameters<typeof parseDatasets>[0]): string => {
  try {
    parseDatasets(vars, app);
    return "accepted";
  } catch (err) {
    return err instanceof ConfigError ? err.message : `other: ${(err as Error).message}`;
  }
};

describe("the datasets tool-exec serves (DATASETS, checked at boot)", () => {
  it("defaults to one dataset, demo, in the datasets database beside the application's, as steward_reader", () => {
    expect(parseDatasets({}, app)).toEqual([{ name: "demo", url: "postgres://steward_reader@db.internal:5432/steward_datasets", schema: "demo_data" }]);
    expect(parseDatasets({ DATASET_NAME: "shop", DATASET_SCHEMA: "shop", DATASET_URL: "postgres://r@db.internal/shop" }, app)).toEqual([
      { name: "shop", url: "postgres://r@db.internal/shop", schema: "shop" },
    ]);
  });

  it("reads several datasets by name, each with its own connection, schema and description", () => {
    const datasets = parseDatasets(
      {
        DATASETS: JSON.stringify({
          demo: { schema: "demo_data", description: "A small shop" },
          ledger: { url: "postgres://ledger_reader:secret@db.internal/ledger", schema: "ledger" },
        }),
      },
      app,
    );
    expect(datasets).toEqual([
      { name: "demo", url: "postgres://steward_reader@db.internal:5432/steward_datasets", schema: "demo_data", description: "A small shop" },
      { name: "ledger", url: "postgres://ledger_reader:secret@db.internal/ledger", schema: "ledger" },
    ]);
  });

  it("refuses two datasets on one database and role: a query on one could read the other's schema", () => {
    const shared = { a: { url: "postgres://r@h/d", schema: "a" }, b: { url: "postgres://r@h:5432/d", schema: "b" } };
    expect(problem({ DATASETS: JSON.stringify(shared) })).toMatch(/^DATASETS: datasets a and b share one database and role/);
    // Another role, or another database, is a wall between them.
    expect(problem({ DATASETS: JSON.stringify({ ...shared, b: { url: "postgres://r2@h/d", schema: "b" } }) })).toBe("accepted");
    expect(problem({ DATASETS: JSON.stringify({ ...shared, b: { url: "postgres://r@h/d2", schema: "b" } }) })).toBe("accepted");
  });

  it("refuses a dataset in the application's own database", () => {
    expect(problem({ DATASETS: JSON.stringify({ x: { url: "postgres://steward_reader@db.internal/steward", schema: "public" } }) })).toMatch(
      /^DATASETS: dataset x is in the application's own database/,
    );
    expect(problem({ DATASET_URL: "postgres://steward_reader@db.internal:5432/steward" })).toMatch(
      /^DATASET_URL: dataset demo is in the application's own database/,
    );
  });

  it("names the variable and the problem, never a URL or its password", () => {
    const cases: Array<[Parameters<typeof parseDatasets>[0], RegExp]> = [
      [{ DATASETS: "{not json" }, /^DATASETS: is not JSON$/],
      [{ DATASETS: "[]" }, /^DATASETS: is not an object/],
      [{ DATASETS: "{}" }, /^DATASETS: must name 1 to 64/],
      [{ DATASETS: JSON.stringify({ "Bad-Name": { schema: "s" } }) }, /^DATASETS: dataset names must match/],
      [{ DATASETS: JSON.stringify({ a: { schema: "s; drop" } }) }, /^DATASETS: dataset a at \/schema/],
      [{ DATASETS: JSON.stringify({ a: { schema: "s", url: "mysql://u:hunter2@h/d" } }) }, /^DATASETS: dataset a at \/url/],
      [{ DATASETS: JSON.stringify({ a: { schema: "s", password: "hunter2" } }) }, /^DATASETS: dataset a/],
      [{ DATASETS: JSON.stringify({ a: { schema: "s" } }), DATASET_URL: "postgres://u:hunter2@h/d" }, /^DATASETS: is set together with DATASET_URL/],
      [{ DATASET_NAME: "Demo" }, /^DATASET_NAME: must match/],
      [{ DATASET_SCHEMA: "a b" }, /^DATASET_SCHEMA: must be an SQL identifier/],
    ];
    for (const [vars, expected] of cases) {
      const message = problem(vars);
      expect([vars, message]).toEqual([vars, expect.stringMatching(expected)]);
      expect(message).not.toContain("hunter2");
    }
  });

  it("names the datasets the operator's list holds that this tool-exec does not serve", () => {
    const datasets = parseDatasets({}, "postgres://steward@db/steward");
    expect(unservedDatasets(parseDatasetTenants('{"demo":["acme"]}'), datasets)).toEqual([]);
    expect(unservedDatasets(parseDatasetTenants('{"demo":["acme"],"ledgr":"*"}'), datasets)).toEqual(["ledgr"]);
  });
});
