import { ROUTES } from "./catalogue";
import type { FuzzFixture } from "./fixture";
import { describeRequest, generateRequest } from "./generate";
import { fuzzTokens } from "./tokens";

const keys = { secret: "s".repeat(43), issuer: "https://id.test", audience: "steward" };
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

async function fixture(): Promise<FuzzFixture> {
  return {
    runs: [
      { id: uuid(1), owner: { tenant: "acme", user: "alice" }, marker: "fzmark-0000000000000001", state: "succeeded" },
      { id: uuid(2), owner: { tenant: "beta", user: "bea" }, marker: "fzmark-0000000000000002", state: "awaiting_input" },
    ],
    documents: [{ id: uuid(3), tenant: "acme", marker: "fzmark-0000000000000003" }],
    tenantMarks: [{ tenant: "beta", what: "policy set 2", marker: "fzmark-0000000000000004" }],
    tokens: await fuzzTokens(keys),
    defaultPolicies: "permit (principal, action, resource);",
  };
}

describe("the gateway fuzz generator", () => {
  it("generates the same request from the same seed and index, and another from another seed", async () => {
    const fx = await fixture();
    for (const index of [0, 1, 77, 9_999]) {
      expect(describeRequest(generateRequest(42, index, fx))).toBe(describeRequest(generateRequest(42, index, fx)));
    }
    const a = Array.from({ length: 50 }, (_, i) => describeRequest(generateRequest(1, i, fx)));
    const b = Array.from({ length: 50 }, (_, i) => describeRequest(generateRequest(2, i, fx)));
    expect(a).not.toEqual(b);
  });

  it("draws every route, refused and accepted tokens, raw requests and bent bodies; fetch can send every other request", async () => {
    const fx = await fixture();
    const routes = new Set<string>();
    const expectations = new Set<string>();
    let raw = 0;
    let bentBodies = 0;
    const unsendable: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      const r = generateRequest(7, i, fx);
      routes.add(r.route.name);
      expectations.add(r.token.expect);
      if (r.raw) raw += 1;
      if (r.mutations.some((m) => m.startsWith("body:"))) bentBodies += 1;
      if (r.raw) continue;
      try {
        new Request(`http://127.0.0.1:1${r.target}`, { method: r.method, headers: r.headers, body: r.body });
      } catch (err) {
        unsendable.push(`${describeRequest(r)}: ${(err as Error).message}`);
      }
    }
    expect(unsendable.slice(0, 5)).toEqual([]);
    expect([...routes].sort()).toEqual(ROUTES.map((r) => r.name).sort());
    expect([...expectations].sort()).toEqual(["accept", "either", "refuse"]);
    expect(raw).toBeGreaterThan(300);
    expect(bentBodies).toBeGreaterThan(1_000);
  });

  it("never prints a token", async () => {
    const fx = await fixture();
    for (let i = 0; i < 2_000; i++) {
      const r = generateRequest(9, i, fx);
      const signature = r.token.header?.split(".")[2];
      if (signature && signature.length > 10) expect(describeRequest(r)).not.toContain(signature);
    }
  });
});
