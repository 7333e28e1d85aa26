import type { FastifyInstance } from "fastify";
import { createLogger, UnauthenticatedError } from "@steward/platform";
import { buildApp, type AppDeps } from "../app";
import { addressKeyOf, bucketsOf, rateLimitsWithDefaults } from "./rate-limits";
import { createSharedAllowance, type LeaseBuckets } from "./shared-allowance";

const logger = createLogger("gateway-test", "silent");

/** An in-memory stand-in for the shared counter (its SQL has its own spec in @steward/store). */
const memoryCounter = (): LeaseBuckets => {
  const leased = new Map<string, number>();
  return async (windowSeconds, wants) =>
    wants.map((w) => {
      const before = leased.get(w.bucket) ?? 0;
      const granted = Math.max(0, Math.min(w.want, w.capacity - before));
      leased.set(w.bucket, before + granted);
      return { bucket: w.bucket, granted, leased: before + granted, capacity: w.capacity, windowStartMs: 0, windowEndsInMs: windowSeconds * 1000 };
    });
};

describe("rate limits on the HTTP surface (fakes behind it)", () => {
  const created: unknown[] = [];
  const limits = rateLimitsWithDefaults({ windowSeconds: 30, perUser: 6, perTenant: 8, runsPerUser: 2, runsPerTenant: 100, perAddress: 3 });
  let app: FastifyInstance;
  let base = "";

  const call = async (method: string, path: string, token?: string, body?: string) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body,
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };

  beforeAll(async () => {
    const deps = {
      logger,
      readiness: { report: async () => ({ ready: true, reasons: [], checks: {} }) },
      authenticate: async (header: string | undefined) => {
        const m = /^Bearer ([a-z]+)\.([a-z]+)$/.exec(header ?? "");
        if (!m) throw new UnauthenticatedError();
        return { tenantId: m[1], userId: m[2], roles: ["member"] };
      },
      authorize: async () => undefined,
      createRun: async (command: { body: unknown }) => {
        created.push(command.body);
        return { id: "00000000-0000-4000-8000-000000000001" };
      },
      controls: { answer: async () => ({}), confirm: async () => ({}), cancel: async () => ({}) },
      rateLimits: { limits, allowance: createSharedAllowance(memoryCounter(), logger, { windowSeconds: limits.windowSeconds }) },
    } as unknown as AppDeps;
    app = buildApp(deps);
    base = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => app.close());

  it("refuses the third run of a user with 429/10429 and Retry-After, before the body is even read: nothing is created", async () => {
    expect((await call("POST", "/v1/agents/runs", "acme.alice", '{"input":"one"}')).status).toBe(201);
    expect((await call("POST", "/v1/agents/runs", "acme.alice", '{"input":"two"}')).status).toBe(201);
    const refused = await call("POST", "/v1/agents/runs", "acme.alice", '{"input":"three"}');
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ status: 429, code: 10429, title: "Too Many Requests" });
    expect(refused.body.detail).toMatch(/^too many requests for runs created by this user; retry after \d+ s$/);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    // Not a JSON body at all: still 429, so the limit is decided before parsing.
    expect((await call("POST", "/v1/agents/runs", "acme.alice", "{not json")).status).toBe(429);
    expect(created).toEqual([{ input: "one" }, { input: "two" }]);
  });

  it("counts a user's other routes on their own limit, and every user of a tenant on the tenant's", async () => {
    // alice has used 2 of her 6 requests: a refused request takes nothing from any limit.
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call("GET", "/v1/agents/runs/not-a-uuid", "acme.alice")).status);
    expect(statuses).toEqual([404, 404, 404, 404, 429]);
    // The tenant has served 6 of 8: bob gets two, then the tenant's limit refuses him too.
    expect((await call("GET", "/v1/agents/runs/not-a-uuid", "acme.bob")).status).toBe(404);
    expect((await call("GET", "/v1/agents/runs/not-a-uuid", "acme.bob")).status).toBe(404);
    const tenantRefusal = await call("GET", "/v1/agents/runs/not-a-uuid", "acme.bob");
    expect([tenantRefusal.status, tenantRefusal.body.detail]).toEqual([429, expect.stringContaining("this tenant")]);
    // Another tenant is not affected.
    expect((await call("GET", "/v1/agents/runs/not-a-uuid", "globex.carol")).status).toBe(404);
  });

  it("limits requests without valid credentials by client address, and never the health probes", async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call("GET", "/v1/agents/runs", i % 2 ? "forged" : undefined)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    for (let i = 0; i < 10; i++) expect((await call("GET", "/healthz")).status).toBe(200);
    expect((await call("GET", "/readyz")).status).toBe(200);
  });
});

describe("bucketsOf and addressKeyOf", () => {
  const limits = rateLimitsWithDefaults();

  it("has documented defaults", () => {
    expect(limits).toEqual({ windowSeconds: 60, perUser: 6000, perTenant: 30_000, runsPerUser: 600, runsPerTenant: 3000, perAddress: 600 });
  });

  it("keys counters by a hash of the identity, never the identity itself, and tells users of two tenants apart", () => {
    const a = bucketsOf({ kind: "user", tenantId: "acme", userId: "alice@example.com" }, true, limits);
    expect(a.map((b) => b.bucket.split(":")[0])).toEqual(["user", "tenant", "user-runs", "tenant-runs"]);
    expect(a.map((b) => b.capacity)).toEqual([6000, 30_000, 600, 3000]);
    expect(a.every((b) => !b.bucket.includes("alice") && !b.bucket.includes("acme"))).toBe(true);
    const b = bucketsOf({ kind: "user", tenantId: "globex", userId: "alice@example.com" }, false, limits);
    expect(b).toHaveLength(2);
    expect(b[0].bucket).not.toBe(a[0].bucket);
  });

  it("gives a caller the same keys on every request, before and after the remembered keys are emptied", () => {
    const first = bucketsOf({ kind: "user", tenantId: "acme", userId: "alice@example.com" }, true, limits).map((x) => x.bucket);
    expect(bucketsOf({ kind: "user", tenantId: "acme", userId: "alice@example.com" }, true, limits).map((x) => x.bucket)).toEqual(first);
    // More callers than it remembers (10,000 keys): it empties, and hashes alike afterwards.
    const addresses = Array.from({ length: 10_050 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    const keys = new Set(addresses.map((address) => bucketsOf({ kind: "address", address }, false, limits)[0].bucket));
    expect(keys.size).toBe(addresses.length);
    expect(bucketsOf({ kind: "user", tenantId: "acme", userId: "alice@example.com" }, true, limits).map((x) => x.bucket)).toEqual(first);
  });

  it("counts an IPv6 client by its /64 and an IPv4-mapped address as IPv4", () => {
    expect(addressKeyOf("203.0.113.9")).toBe("203.0.113.9");
    expect(addressKeyOf("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(addressKeyOf("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKeyOf("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
    expect(addressKeyOf("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKeyOf("::1")).toBe("0:0:0:0::/64");
  });
});
