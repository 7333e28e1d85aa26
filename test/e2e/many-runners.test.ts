import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi } from "../support/fake-openai";
import { counterModel, counterRunRecords, expectedCounterRuns, submitCounterRuns, terminalStates } from "../support/counter-runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(120_000);

const RUNS = 30;
const TOOL_DELAY_MS = 100;

/** Three runners on one platform (the platform's own and two more), 30 counter runs, each checked to the event. */
async function shareRuns(runnerEnv: Record<string, string>) {
  const counter = counterModel(2);
  const model = await startFakeOpenAi(counter.script);
  const platform: TestPlatform = await startTestPlatform({ ...runnerEnv, LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake-model" });
  const pool = new pg.Pool({ connectionString: platform.databaseUrl });
  try {
    await platform.startRunner({ RUNNER_ID: "runner-b" });
    await platform.startRunner({ RUNNER_ID: "runner-c" });
    const token = await platform.token({ tenant: "sharedco", user: "ops" });
    const runs = await submitCounterRuns(platform, token, "shared", RUNS, TOOL_DELAY_MS);
    const ids = runs.map((r) => r.id);
    await waitFor(() => terminalStates(pool, ids), { timeoutMs: 60_000, intervalMs: 200, what: `the ${RUNS} runs to end` });
    const records = await counterRunRecords(pool, runs, counter.asked);
    const started = await pool.query<{ stream_id: string; runner_id: string }>(
      "SELECT stream_id, data->>'runner_id' AS runner_id FROM events WHERE type = 'run.started' AND stream_id = ANY($1::uuid[])",
      [ids],
    );
    return { records, started: started.rows };
  } finally {
    await pool.end();
    await platform.teardown();
    await model.close();
  }
}

describe("several runners share the runs", () => {
  it("3 runners drive 30 runs: each run once, its side effects once, its events without gap; the work is shared", async () => {
    // Two runs at a time per runner: the work must spread over the three.
    const { records, started } = await shareRuns({ RUNNER_CONCURRENCY: "2", PG_POOL_MAX: "8" });

    // Every run succeeded; versions 1..n; one run.started (a run was driven by one runner at a time and never
    // started twice); one answer per model step and one request per step; one call and one result per call id;
    // the counter is exactly 1 per key.
    expect(records).toEqual(expectedCounterRuns(records));
    expect(started).toHaveLength(RUNS);
    const byRunner = new Map<string, number>();
    for (const s of started) byRunner.set(s.runner_id, (byRunner.get(s.runner_id) ?? 0) + 1);
    expect(byRunner.size).toBeGreaterThan(1);
  });

  // Regression: tool-exec once held a client of the tools' own pool while an idempotent tool ran, and
  // deadlocked when as many idempotent calls were in flight as the pool had connections.
  it("3 runners at their default concurrency drive 30 runs (tool-exec's default pool)", async () => {
    const { records, started } = await shareRuns({ PG_POOL_MAX: "10" });
    expect(records).toEqual(expectedCounterRuns(records));
    // At 32 runs per runner one runner may take all 30 (the first test shows the sharing); each started once.
    expect(started).toHaveLength(30);
  });
});
