import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type FakeOpenAi } from "../support/fake-openai";
import { counterInput, counterModel } from "../support/counter-runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

// Fair share across tenants (SPEC §10): one tenant posts 300 runs; another tenant's run posted
// right after starts at once instead of behind the whole backlog, and the flooding tenant never has more
// runs in flight than its limit. Nothing deferred is lost: the flood keeps being admitted as places free.

const FLOOD = 300;
const LIMIT = 4;

describe("fair share across tenants", () => {
  let model: FakeOpenAi;
  let platform: TestPlatform;
  let pool: pg.Pool;

  beforeAll(async () => {
    model = await startFakeOpenAi(counterModel(2).script);
    platform = await startTestPlatform({
      LLM_BASE_URL: model.baseUrl,
      LLM_API_KEY: "sk-test",
      LLM_MODEL: "fake-model",
      RUNNER_TENANT_MAX_RUNNING: String(LIMIT),
      RUNNER_CONCURRENCY: "8",
    });
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  const notStarted = async (tenant: string) =>
    (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1 AND started_at IS NULL", [tenant])).rows[0].n;

  it("a flooding tenant's backlog does not hold another tenant's run back, and stays within its limit", async () => {
    const flooder = await platform.token({ tenant: "floodco", user: "bulk" });
    const other = await platform.token({ tenant: "quietco", user: "solo" });
    for (let i = 0; i < FLOOD; i++) {
      const created = await platform.http("POST", "/v1/agents/runs", { token: flooder, body: { input: counterInput(`flood-${i}`, 300) } });
      expect(created.status).toBe(201);
    }
    // The flood is in: most of it deferred, waiting for places of its tenant.
    await waitFor(
      async () => ((await pool.query("SELECT 1 FROM runs WHERE tenant_id = 'floodco' AND deferred_at IS NOT NULL")).rowCount ?? 0) >= FLOOD / 2 || undefined,
      { timeoutMs: 60_000, intervalMs: 100, what: "the flood's commands to be taken and deferred" },
    );

    const posted = Date.now();
    const mine = await platform.http("POST", "/v1/agents/runs", { token: other, body: { input: counterInput("quiet", 300) } });
    expect(mine.status).toBe(201);
    const startedAt = await waitFor(
      async () => {
        const { rows } = await pool.query<{ at: Date }>("SELECT recorded_at AS at FROM events WHERE stream_id = $1 AND type = 'run.started'", [mine.body.id]);
        return rows[0] ? Date.now() : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50, what: "the other tenant's run to start" },
    );
    const floodWaiting = await notStarted("floodco");
    console.info(`other tenant's run started ${startedAt - posted} ms after it was posted; ${floodWaiting} of the flood's ${FLOOD} runs not started yet`);
    // Started while most of the flood still waits: it did not queue behind it (without fair share it starts
    // after all 300 have).
    expect(floodWaiting).toBeGreaterThan(FLOOD / 2);

    // The deferred runs are admitted as places free: the flood keeps ending runs.
    await waitFor(
      async () => ((await pool.query("SELECT 1 FROM runs WHERE tenant_id = 'floodco' AND state = 'succeeded'")).rowCount ?? 0) >= 3 * LIMIT || undefined,
      { timeoutMs: 90_000, intervalMs: 200, what: `${3 * LIMIT} of the flood's runs to succeed` },
    );
    expect((await platform.http("GET", `/v1/agents/runs/${mine.body.id}`, { token: other })).body.state).not.toBe("queued");

    // Never more than LIMIT of the flood in flight at once: the intervals from run.started to the run's end
    // (its terminal event) overlap at most LIMIT deep.
    const { rows } = await pool.query<{ t: Date; d: number }>(
      `SELECT e.recorded_at AS t, CASE WHEN e.type = 'run.started' THEN 1 ELSE -1 END AS d
         FROM events e JOIN runs r ON r.id = e.stream_id
        WHERE r.tenant_id = 'floodco' AND e.type IN ('run.started', 'run.succeeded', 'run.failed', 'run.cancelled')
        ORDER BY e.recorded_at, d`,
    );
    let depth = 0;
    let deepest = 0;
    for (const row of rows) deepest = Math.max(deepest, (depth += row.d));
    expect(deepest).toBeGreaterThan(0);
    expect(deepest).toBeLessThanOrEqual(LIMIT);
  });
});
