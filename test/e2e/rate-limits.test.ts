import { randomBytes } from "node:crypto";
import pg from "pg";
import { SignJWT } from "jose";
import { ApiErrorCode } from "@steward/contract";
import { startTestPlatform, type RunningService, type TestPlatform } from "../support/platform";
import { callGateway, checkAgainstOpenApi } from "../support/gateway-http";
import { natsUrl } from "../support/databases";

jest.setTimeout(180_000);

// eslint-disable-next-line @typescript-eslint/no-require-imports
const launcher = require("../../infra/local/launcher.cjs") as {
  startService(
    service: string,
    env: Record<string, string>,
    options?: { readyMsg?: string },
  ): Promise<RunningService & { ready: { addr: string }; whenReady(): Promise<void> }>;
};

/** Run creation per tenant is the limit under test; the others stay at their (much higher) defaults. */
const RUNS_PER_TENANT = 6;
const limits = {
  // Long enough that the window cannot end during the test (a bucket's window starts with its first request).
  GATEWAY_RATE_LIMIT_WINDOW_SECONDS: "3600",
  GATEWAY_RATE_LIMIT_RUNS_PER_TENANT: String(RUNS_PER_TENANT),
};

describe("rate limits shared by two gateway replicas through PostgreSQL", () => {
  const secret = randomBytes(32).toString("base64url");
  let platform: TestPlatform;
  let second: RunningService & { ready: { addr: string }; whenReady(): Promise<void> };
  let secondUrl: string;
  let pool: pg.Pool;

  const token = (tenant: string, user: string) =>
    new SignJWT({ tid: tenant, roles: ["member"] })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(user)
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(secret));

  async function post(baseUrl: string, bearer: string, input: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${baseUrl}/v1/agents/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ input }),
    });
    const body = (await res.json()) as any;
    // Refusals included (429 with Retry-After): every answer is what the document says.
    await checkAgainstOpenApi(baseUrl, {
      method: "POST",
      path: "/v1/agents/runs",
      status: res.status,
      contentType: res.headers.get("content-type"),
      body,
      empty: false,
    });
    return { status: res.status, headers: res.headers, body };
  }

  /** What run creations wrote for the tenant: run rows, their run.queued events, their commands in the outbox. */
  async function written(tenant: string) {
    const { rows } = await pool.query<{ runs: number; queued: number; commands: number; orphans: number }>(
      `SELECT (SELECT count(*) FROM runs WHERE tenant_id = $1)::int AS runs,
              (SELECT count(*) FROM events WHERE tenant_id = $1 AND type = 'run.queued')::int AS queued,
              (SELECT count(DISTINCT payload::jsonb->>'run_id') FROM outbox
                WHERE subject LIKE '%agent.run.requested' AND payload::jsonb->>'tenant_id' = $1)::int AS commands,
              (SELECT count(*) FROM outbox WHERE subject LIKE '%agent.run.requested'
                AND (payload::jsonb->>'run_id')::uuid NOT IN (SELECT id FROM runs))::int AS orphans`,
      [tenant],
    );
    return rows[0];
  }

  beforeAll(async () => {
    platform = await startTestPlatform({ STEWARD_JWT_SECRET: secret, ...limits });
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    // A second replica: same database, same bus namespace, same keys, its own port and its own memory.
    second = await launcher.startService("gateway", {
      ...(platform.tlsFiles.gateway ?? {}),
      STEWARD_TEST_HOOKS: "1",
      DATABASE_URL: platform.databaseUrl,
      NATS_URL: natsUrl,
      STEWARD_ENV: "test",
      STEWARD_NATS_NAMESPACE: platform.namespace,
      STEWARD_JWT_SECRET: secret,
      POLICY_ADDR: platform.policyAddr,
      GATEWAY_PORT: "0",
      LOG_LEVEL: "info",
      PG_POOL_MAX: "4",
      ...limits,
    });
    secondUrl = second.ready.addr;
    await second.whenReady();
  });

  afterAll(async () => {
    await second?.stop();
    await pool?.end();
    await platform?.teardown();
  });

  it("one tenant's run creations are counted once across both replicas; then 429/10429 with Retry-After, and nothing written", async () => {
    const alice = await token("acme", "alice");
    const bob = await token("acme", "bob");
    const firstUrl = platform.gatewayUrl;
    expect(firstUrl).not.toBe(secondUrl);

    // Three on each replica: neither saw more than half of the tenant's limit by itself.
    for (let i = 0; i < RUNS_PER_TENANT / 2; i++) {
      expect((await post(firstUrl, alice, `alice ${i}`)).status).toBe(201);
      expect((await post(secondUrl, bob, `bob ${i}`)).status).toBe(201);
    }
    const before = await written("acme");
    expect(before).toEqual({ runs: RUNS_PER_TENANT, queued: RUNS_PER_TENANT, commands: RUNS_PER_TENANT, orphans: 0 });

    for (const [url, who] of [
      [firstUrl, alice],
      [secondUrl, bob],
      [secondUrl, alice],
    ] as const) {
      const refused = await post(url, who, "one too many", { "Idempotency-Key": `over-${randomBytes(4).toString("hex")}` });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(refused.body).toMatchObject({ status: 429, code: ApiErrorCode.rateLimited, title: "Too Many Requests" });
      expect(refused.body.detail).toContain("runs created in this tenant");
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThan(3000);
      expect(retryAfter).toBeLessThanOrEqual(3600);
    }

    // A refused request changed nothing: no run, no run.queued event, no command in the outbox.
    expect(await written("acme")).toEqual(before);

    // Only run creation is spent: the same users still read, and another tenant still creates, on either replica.
    const list = await callGateway(secondUrl, alice, "GET", "/v1/agents/runs");
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(RUNS_PER_TENANT / 2);
    const carol = await token("globex", "carol");
    expect((await post(firstUrl, carol, "globex 1")).status).toBe(201);
    expect((await post(secondUrl, carol, "globex 2")).status).toBe(201);
  });
});
