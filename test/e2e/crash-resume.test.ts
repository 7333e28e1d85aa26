import pg from "pg";
import { jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@steward/contract";
import type { NatsConnection } from "@steward/platform";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type FakeOpenAi } from "../support/fake-openai";
import { counterModel, counterRunRecords, expectedCounterRuns, submitCounterRuns, terminalStates } from "../support/counter-runs";
import { startCrashLoop } from "../support/crashy-runner";
import { waitFor } from "../support/wait-for";

jest.setTimeout(150_000);

const RUNS = 20;
/** Kills per crash point; the crashy runner is not restarted after this many. */
const MAX_CRASHES = 10;
/** How long each test_counter call takes: tool-exec is mid-call when `during_tool` fires (50 ms after the send). */
const TOOL_DELAY_MS = 300;

/** Short lease and ack wait so that a dead runner's runs come back within seconds; the same for every runner. */
const timings = {
  RUNNER_LEASE_MS: "1500",
  RUNNER_ACK_WAIT_MS: "1500",
  RUNNER_RETRY_BACKOFF_MS: "100",
  // A crashy runner may take a run that a previous crashy runner was killed on, and be killed on it again;
  // each kill costs the run a delivery or two (the redelivery may find the dead holder's lease still running).
  // Enough deliveries that the kills below never exhaust them (at 5, a run killed three times may be left to
  // its deadline, which is the poison-run limit working, not what this suite is about).
  RUNNER_MAX_DELIVER: "20",
};

/**
 * The stable runner drives at most 2 runs at once, so that the crashy runner (one at a time) gets its share
 * of the 20 runs and each point sees several kills. With tool-exec's pool at 8 connections this also keeps
 * tool-exec below the number of concurrent idempotent calls that deadlocks its pool (see the skipped test in
 * many-runners.test.ts).
 */
const STABLE_CONCURRENCY = "2";
const PG_POOL_MAX = "8";

describe("kill -9 of a runner at each crash point: every run resumes from its events and succeeds", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let token: string;
  let nc: NatsConnection;
  const counter = counterModel(2);

  beforeAll(async () => {
    model = await startFakeOpenAi(counter.script);
    platform = await startTestPlatform({
      ...timings,
      RUNNER_CONCURRENCY: STABLE_CONCURRENCY,
      PG_POOL_MAX,
      LLM_BASE_URL: model.baseUrl,
      LLM_API_KEY: "sk-test",
      LLM_MODEL: "fake-model",
    });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    token = await platform.token({ tenant: "crashco", user: "ops" });
    nc = await platform.nats();
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  async function consumerInfo() {
    const names = busNames(platform.namespace);
    const jsm = await jetstreamManager(nc);
    return jsm.consumers.info(names.commandStream, names.runnerConsumer);
  }

  /** What the runs that did not end look like: projection, events, the consumer, and log lines naming them. */
  async function diagnose(ids: string[], logs: string[][]): Promise<string> {
    const { rows } = await pool.query(
      "SELECT id, state, version, lease_owner, lease_until FROM runs WHERE id = ANY($1::uuid[]) AND state NOT IN ('succeeded', 'failed')",
      [ids],
    );
    const out = [`open runs: ${JSON.stringify(rows)}`];
    const info = await consumerInfo();
    out.push(
      `consumer: ${JSON.stringify({ ...info.delivered, ack_floor: info.ack_floor, num_ack_pending: info.num_ack_pending, num_redelivered: info.num_redelivered, num_pending: info.num_pending, num_waiting: info.num_waiting })}`,
    );
    for (const r of rows.slice(0, 3)) {
      const events = await pool.query("SELECT version, type FROM events WHERE stream_id = $1 ORDER BY version", [r.id]);
      out.push(`${r.id} events: ${events.rows.map((e) => `${e.version}:${e.type}`).join(" ")}`);
      out.push(
        ...logs
          .flat()
          .filter((l) => l.includes(r.id))
          .slice(-15),
      );
    }
    const sessions = await pool.query(
      "SELECT application_name, state, count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() GROUP BY 1, 2 ORDER BY 1, 2",
    );
    out.push(`database sessions: ${JSON.stringify(sessions.rows)}`);
    out.push("tool-exec log tail:", ...platform.services.toolExec.lines.slice(-10));
    return out.join("\n");
  }

  it.each(["before_model", "after_model", "during_tool", "after_tool"] as const)("crash at %s", async (point) => {
    let settled = false;
    const deliveredBefore = (await consumerInfo()).delivered.consumer_seq;
    // The crashy runner drives one run at a time, so each kill interrupts exactly one run, at `point`.
    const crashy = await startCrashLoop(platform, point, {
      env: { RUNNER_CONCURRENCY: "1" },
      maxStarts: MAX_CRASHES + 5,
      maxCrashes: MAX_CRASHES,
      shouldRestart: () => !settled,
    });
    let runs: Array<{ tag: string; id: string }> = [];
    try {
      runs = await submitCounterRuns(platform, token, point, RUNS, TOOL_DELAY_MS);
      const ids = runs.map((r) => r.id);
      await waitFor(() => terminalStates(pool, ids), { timeoutMs: 90_000, intervalMs: 200, what: `the ${RUNS} runs to end (${point})` }).catch(
        async (err: Error) => {
          throw new Error(`${err.message}\n${await diagnose(ids, [...crashy.lines.values(), platform.services.runner.lines])}`);
        },
      );
    } finally {
      settled = true;
      await crashy.stop();
    }

    const records = await counterRunRecords(pool, runs, counter.asked);
    const consumer = await consumerInfo();
    const extraAsks = Object.values(records).reduce((n, r) => n + r.askedSteps.length - new Set(r.askedSteps).size, 0);
    // A crashy runner that got past a tool step before it was killed: for `during_tool` the kill comes 50 ms
    // after the call was sent, and a call resumed from a previous crash is answered from tool-exec's record at
    // once, so the runner may have recorded the result and sent the next model request when it dies.
    const crashed = new Set(crashy.exits.filter((e) => e.signal === "SIGKILL").map((e) => e.runnerId));
    const pastToolStep = [...crashy.lines].filter(([id, lines]) => crashed.has(id) && lines.some((l) => l.includes('"msg":"tool step"'))).length;
    console.info(
      `${point}: ${crashy.crashes} crashes over ${crashy.starts} crashy runner starts; ` +
        `${consumer.delivered.consumer_seq - deliveredBefore} deliveries for ${RUNS} runs; ` +
        `${extraAsks} model requests repeated (${pastToolStep} crashed runners had completed a tool step)`,
    );
    expect(crashy.startErrors).toEqual([]);
    expect(crashy.crashes).toBeGreaterThanOrEqual(1);

    // A model request is repeated only when its runner died between sending it and recording the answer.
    // Only `during_tool` can kill there (its kill is on a timer); the other points kill synchronously right
    // before the request is sent or right after an answer or a result was recorded. Each crashy runner holds
    // one run, so each such kill repeats at most one request.
    if (point === "during_tool") {
      expect(extraAsks).toBeLessThanOrEqual(pastToolStep);
      for (const r of Object.values(records)) r.askedSteps = [...new Set(r.askedSteps)];
    }
    // Every run succeeded; events 1..n with no gap or duplicate; exactly one recorded answer per model step
    // (no answer was asked for again once recorded); one tool_call and one tool_result per call; the side
    // effect happened exactly once per key; the model was asked for each step (once, but for the above).
    expect(records).toEqual(expectedCounterRuns(records));

    if (point === "during_tool") {
      // tool-exec dealt with the interrupted calls: one whose caller died mid-way is dropped (nothing kept; the
      // next holder sends it again and it runs then), one that had finished is answered from its record.
      // Either way the effect happened once per key (checked above).
      const logs = [...crashy.lines.values(), platform.services.runner.lines].flat();
      const replayed = logs.filter((l) => l.includes('"msg":"tool step"') && l.includes('"replayed":true'));
      const dropped = platform.services.toolExec.lines.filter((l) => l.includes("call dropped: its caller is gone"));
      expect(replayed.length + dropped.length).toBeGreaterThanOrEqual(1);
    }
  });
});
