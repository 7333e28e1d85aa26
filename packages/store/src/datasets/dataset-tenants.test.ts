import { parseDatasetTenants } from "./dataset-tenants";

describe("the operator's list of the tenants each dataset may be granted to (DATASET_TENANTS)", () => {
  it('allows a listed tenant, and every tenant for "*"', () => {
    const listed = parseDatasetTenants('{"demo":["demo","acme"],"open":"*"}');
    expect([listed.allows("demo", "demo"), listed.allows("demo", "acme"), listed.allows("demo", "globex")]).toEqual([true, true, false]);
    expect([listed.allows("open", "anyone"), listed.allows("ledger", "demo")]).toEqual([true, false]);
    expect(listed.datasets).toEqual(["demo", "open"]);
  });

  it("unset or empty, lets no tenant have any dataset", () => {
    for (const raw of [undefined, "", "  ", "{}"]) expect(parseDatasetTenants(raw).allows("demo", "demo")).toBe(false);
  });

  it.each([
    ["not JSON", "{demo:", "is not JSON"],
    ["an array", '["demo"]', "is not an object"],
    ["a bad dataset name", '{"Demo":["a"]}', "dataset names must match"],
    ["tenants that are not a list", '{"demo":"acme"}', "give an array"],
    ["an empty tenant id", '{"demo":[""]}', "give an array"],
    ["a tenant id that is not a string", '{"demo":[1]}', "give an array"],
  ])("refuses %s, naming the variable", (_what, raw, message) => {
    expect(() => parseDatasetTenants(raw)).toThrow(new RegExp(`^DATASET_TENANTS: .*${message}`));
  });

  it("refuses more datasets than it may hold", () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`d${i}`, ["a"]]));
    expect(() => parseDatasetTenants(JSON.stringify(many))).toThrow(/more than 64 datasets/);
  });
});
