import { startTestPlatform, type RunningService, type TestPlatform } from "../support/platform";
import { waitFor } from "../support/wait-for";

jest.setTimeout(120_000);

/** The health URL a service logged when its ports were bound. */
function healthOf(service: RunningService): string {
  for (const line of service.lines) {
    try {
      const parsed = JSON.parse(line);
      if (parsed.msg === "listening" && typeof parsed.health === "string") return parsed.health;
    } catch {
      // not a log line
    }
  }
  throw new Error("the service logged no health address");
}

describe("readiness and the operator's status route", () => {
  let platform: TestPlatform;
  let admin: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ STEWARD_OPERATOR_TENANT: "opsco" });
    admin = await platform.token({ tenant: "opsco", user: "root", roles: ["admin"] });
  });
  afterAll(async () => {
    await platform?.teardown();
  });

  const status = () => platform.http("GET", "/v1/admin/status", { token: admin });

  it("every service answers /healthz and /readyz on its own port, ready with each check named", async () => {
    const { policy, toolExec, runner, gateway } = platform.services;
    const expected = {
      policy: ["nats", "postgres"],
      toolExec: ["policy", "postgres"],
      runner: ["consumer", "nats", "postgres", "tool-exec"],
      gateway: ["nats", "policy", "postgres"],
    };
    for (const [name, service] of Object.entries({ policy, toolExec, runner, gateway })) {
      const url = healthOf(service);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      const ready = await waitFor(
        async () => {
          const res = await fetch(`${url}/readyz`);
          return res.status === 200 ? ((await res.json()) as { status: string; checks: Record<string, unknown> }) : undefined;
        },
        { what: `${name} to be ready` },
      );
      expect({ name, status: ready.status, checks: Object.keys(ready.checks).sort() }).toEqual({
        name,
        status: "ready",
        checks: expected[name as keyof typeof expected],
      });
    }
  });

  it("shows a whole platform to an administrator, and refuses a member (403) and a query (400)", async () => {
    const whole = await waitFor(
      async () => {
        const r = await status();
        return r.status === 200 && r.body.status === "ok" ? r.body : undefined;
      },
      { what: "the status to be ok" },
    );
    expect(whole.problems).toEqual([]);
    expect(whole.dependencies.postgres.ok && whole.dependencies.nats.ok && whole.dependencies.policy.ok).toBe(true);
    expect(whole.services.map((s: { service: string }) => s.service).sort()).toEqual(["agent-runner", "gateway", "policy"]);
    expect(whole.runners).toMatchObject({ attached: 1, consumer: { pending: 0 } });
    expect(whole.queue).toMatchObject({ queued: 0, oldest_queued_age_seconds: null });
    expect(whole.outbox).toMatchObject({ backlog: 0 });
    expect(whole.dead_letters).toEqual({ count: 0, last_at: null });

    const member = await platform.token({ tenant: "opsco", user: "someone" });
    const denied = await platform.http("GET", "/v1/admin/status", { token: member });
    expect([denied.status, denied.body.code]).toEqual([403, 10031]);
    const bad = await platform.http("GET", "/v1/admin/status?verbose=1", { token: admin });
    expect([bad.status, bad.body.code]).toEqual([400, 10001]);
  });

  it("shows another tenant's administrator its own tenant only: no instance, no runner, nothing of the platform's insides", async () => {
    const acmeAdmin = await platform.token({ tenant: "acme", user: "root", roles: ["admin"] });
    const own = await platform.http("GET", "/v1/admin/status", { token: acmeAdmin });
    expect(own.status).toBe(200);
    expect(Object.keys(own.body).sort()).toEqual(["checked_at", "problems", "queue", "scope", "status", "tenant_id"]);
    expect(own.body).toMatchObject({ scope: "tenant", tenant_id: "acme", status: "ok", problems: [], queue: { queued: 0, running: 0, awaiting: 0 } });
    expect((await status()).body.scope).toBe("platform");
    // Without an operators' tenant configured, nobody sees the whole platform: opsco's administrator sees opsco.
    const unset = await startTestPlatform();
    try {
      const ops = await unset.http("GET", "/v1/admin/status", { token: await unset.token({ tenant: "opsco", user: "root", roles: ["admin"] }) });
      expect([ops.status, ops.body.scope, ops.body.tenant_id]).toEqual([200, "tenant", "opsco"]);
    } finally {
      await unset.teardown();
    }
  });

  it("says 'no runner' while none is attached; the run queued meanwhile starts once one attaches", async () => {
    await platform.services.runner.stop();
    const degraded = await waitFor(
      async () => {
        const r = await status();
        return r.body.runners?.attached === 0 ? r.body : undefined;
      },
      { what: "the status to see no runner" },
    );
    expect(degraded.status).toBe("degraded");
    expect(degraded.problems).toContain("no runner is attached: queued runs will not start");
    // The gateway's own readiness is about the gateway: it stays ready.
    expect((await fetch(`${platform.gatewayUrl}/readyz`)).status).toBe(200);

    const member = await platform.token({ tenant: "opsco", user: "waiting" });
    const created = await platform.http("POST", "/v1/agents/runs", { token: member, body: { input: "How long do I have to ask for a refund?" } });
    expect(created.status).toBe(201);
    const queued = await waitFor(
      async () => {
        const r = await status();
        return r.body.queue?.queued === 1 && r.body.runners.consumer?.pending === 1 ? r.body : undefined;
      },
      { what: "the queued run to show" },
    );
    expect(queued.queue.oldest_queued_age_seconds).toEqual(expect.any(Number));
    // A tenant's administrator counts its own tenant's runs only: globex's queued run, never opsco's or globex's to acme.
    const globex = await platform.token({ tenant: "globex", user: "gil" });
    expect((await platform.http("POST", "/v1/agents/runs", { token: globex, body: { input: "How long do I have to ask for a refund?" } })).status).toBe(201);
    const ownQueue = async (tenant: string) =>
      (await platform.http("GET", "/v1/admin/status", { token: await platform.token({ tenant, user: "root", roles: ["admin"] }) })).body;
    expect((await ownQueue("globex")).queue).toMatchObject({ queued: 1, running: 0 });
    expect((await ownQueue("acme")).queue).toMatchObject({ queued: 0, running: 0, oldest_queued_age_seconds: null });
    expect((await status()).body.queue.queued).toBe(2);

    await platform.startRunner();
    const run = await waitFor(
      async () => {
        const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token: member });
        return ["succeeded", "failed"].includes(r.body.state) ? r.body : undefined;
      },
      { what: "the queued run to end" },
    );
    expect(run.state).toBe("succeeded");
    const whole = await waitFor(
      async () => {
        const r = await status();
        return r.body.status === "ok" ? r.body : undefined;
      },
      { what: "the status to be ok again" },
    );
    expect(whole.runners.attached).toBe(1);
  });
});
