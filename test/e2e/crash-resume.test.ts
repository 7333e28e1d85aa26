import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type FakeOpenAi } from "../support/fake-openai";
import { counterModel, counterRunRecords, expectedCounterRun, submitCounterRuns, terminalStates } from "../support/counter-runs";
import { startCrashLoop } from "../support/crashy-runner";
import { waitFor } from "../support/wait-for";

jest.setTimeout(150_000);

const RUNS = 20;

/** Short lease and ack wait so that a dead runner's runs come back within seconds; the same for every runner. */
const timings = {
  RUNNER_LEASE_MS: "1500",
  RUNNER_ACK_WAIT_MS: "1500",
  RUNNER_RETRY_BACKOFF_MS: "100",
};

describe("kill -9 of a runner at each crash point: every run resumes from its events and succeeds", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let token: string;
  const counter = counterModel(2);

  beforeAll(async () => {
    model = await startFakeOpenAi(counter.script);
    platform = await startTestPlatform({ ...timings, LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake-model" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    token = await platform.token({ tenant: "crashco", user: "ops" });
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it.each([
    ["before_model", 100],
    ["after_model", 100],
    ["during_tool", 300],
    ["after_tool", 100],
  ] as const)("crash at %s (tool delay %d ms)", async (point, delayMs) => {
    let settled = false;
    // The crashy runner drives one run at a time, so each kill interrupts exactly one run, at `point`.
    const crashy = await startCrashLoop(platform, point, {
      env: { RUNNER_CONCURRENCY: "1" },
      maxStarts: 40,
      shouldRestart: () => !settled,
    });
    let runs: Array<{ tag: string; id: string }> = [];
    try {
      runs = await submitCounterRuns(platform, token, point, RUNS, delayMs);
      const ids = runs.map((r) => r.id);
      await waitFor(() => terminalStates(pool, ids), { timeoutMs: 90_000, intervalMs: 200, what: `the ${RUNS} runs to end (${point})` });
    } finally {
      settled = true;
      await crashy.stop();
    }

    const records = await counterRunRecords(pool, runs, counter.asked);
    // eslint-disable-next-line no-console
    console.info(`${point}: ${crashy.crashes} crashes over ${crashy.starts} crashy runner starts`);
    expect(crashy.startErrors).toEqual([]);
    expect(crashy.crashes).toBeGreaterThanOrEqual(1);
    // Every run succeeded; events 1..n with no gap or duplicate; one recorded answer per model step; one
    // tool_call and one tool_result per call; the side effect happened exactly once per key; and the model was
    // asked once per step (no kill point lies between sending a request and recording its answer).
    expect(records).toEqual(Object.fromEntries(Object.keys(records).map((k) => [k, expectedCounterRun])));

    if (point === "during_tool") {
      // The interrupted call was sent again by the run's next holder, and tool-exec answered it from its record.
      const logs = [...crashy.lines.values(), platform.services.runner.lines].flat();
      const replayed = logs.filter((l) => l.includes('"msg":"tool step"') && l.includes('"replayed":true'));
      expect(replayed.length).toBeGreaterThanOrEqual(1);
    }
  });
});
