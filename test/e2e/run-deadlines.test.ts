import { randomUUID } from "node:crypto";
import pg from "pg";
import { addSeconds, initialRunState, nowMicros } from "@steward/contract";
import { appendRunEvents } from "@steward/store";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf, runToEnd } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

/** Appends a run's run.queued without its agent.run.requested, as if the bus had lost the command. */
async function appendOrphanRun(pool: pg.Pool, namespace: string, input: string, deadlineSeconds: number): Promise<string> {
  const runId = randomUUID();
  const createdAt = nowMicros();
  await appendRunEvents(pool, {
    runId,
    tenantId: "acme",
    state: initialRunState,
    events: [
      {
        type: "run.queued",
        data: {
          input,
          mode: "agent",
          response_language: null,
          created_by: "uma",
          created_at: createdAt,
          deadline_at: addSeconds(createdAt, deadlineSeconds),
          thread_id: null,
        },
      },
    ],
    namespace,
  });
  return runId;
}

const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);

// Order matters: the provider's breaker counts failures across runs, so the deadline case (an abort, which
// does not count) runs first and the 5xx cases after it stay below the breaker's volume threshold.
describe("model unavailable, deadlines and the reaper", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let token: string;
  const attempts = new Map<string, number>();

  beforeAll(async () => {
    model = await startFakeOpenAi((req): Reply | Promise<Reply> => {
      const input = inputOf(req);
      const n = (attempts.get(input) ?? 0) + 1;
      attempts.set(input, n);
      if (input.startsWith("down-once") && n === 1) return { status: 503 };
      if (input.startsWith("down-always")) return { status: 500 };
      if (input.startsWith("slow")) return new Promise((resolve) => setTimeout(() => resolve({ text: "too late" }), 8000));
      return { text: `answered ${input}` };
    });
    platform = await startTestPlatform({
      LLM_BASE_URL: model.baseUrl,
      LLM_API_KEY: "sk-test",
      LLM_MODEL: "fake",
      RUNNER_MAX_DELIVER: "3",
      RUNNER_RETRY_BACKOFF_MS: "50",
      RUNNER_REAPER_INTERVAL_MS: "200",
      RUNNER_REDRIVE_AFTER_MS: "1000",
      STEWARD_TEST_DEADLINE_SECONDS: "3",
    });
    token = await platform.token({ tenant: "acme", user: "uma" });
  });

  afterAll(async () => {
    await platform?.teardown();
    await model?.close();
  });

  it("60402: a model call still running at the deadline is abandoned and the run fails", async () => {
    const run = await runToEnd(platform, token, "slow");
    expect(run.state).toBe("failed");
    expect(run.error).toMatchObject({ code: 60402 });
    expect(Date.parse(run.finished_at)).toBeGreaterThanOrEqual(Date.parse(run.deadline_at));
    expect(Date.parse(run.finished_at) - Date.parse(run.deadline_at)).toBeLessThan(8000);
  });

  it("a 5xx on the first delivery is retried through JetStream redelivery and the run succeeds", async () => {
    const run = await runToEnd(platform, token, "down-once");
    expect(run.state).toBe("succeeded");
    expect(run.output.text).toBe("answered down-once");
    expect(attempts.get("down-once")).toBe(2);
  });

  it("60300: a 5xx on every delivery fails the run on the last one, without the provider's words", async () => {
    const run = await runToEnd(platform, token, "down-always");
    expect(run.state).toBe("failed");
    expect(run.error).toMatchObject({ code: 60300, step_no: 1 });
    expect(attempts.get("down-always")).toBe(3);
    const events = await eventsOf(platform, token, run.id);
    expect(JSON.stringify(events)).not.toContain("upstream exploded");
    expect(JSON.stringify(run)).not.toContain("secret-sauce");
  });

  it("a run whose command was lost is requested again by the reaper and then driven", async () => {
    const pool = new pg.Pool({ connectionString: platform.databaseUrl });
    try {
      const runId = await appendOrphanRun(pool, platform.namespace, "lost command", 60);
      const done = await waitFor(async () => {
        const r = await platform.http("GET", `/v1/agents/runs/${runId}`, { token });
        return r.body.state === "succeeded" ? r.body : undefined;
      });
      expect(done.output.text).toBe("answered lost command");
      const { rows } = await pool.query("SELECT count(*)::int AS n FROM outbox WHERE msg_id LIKE $1", [`run.requested.${runId}.%`]);
      expect(rows[0].n).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it("60402 by the reaper: a run nobody drives is failed after its deadline, with the event appended", async () => {
    const pool = new pg.Pool({ connectionString: platform.databaseUrl });
    try {
      // A run whose command never reached the bus: only the reaper can end it.
      const runId = await appendOrphanRun(pool, platform.namespace, "orphan", 1);
      const failed = await waitFor(async () => {
        const r = await platform.http("GET", `/v1/agents/runs/${runId}`, { token });
        return r.body.state === "failed" ? r.body : undefined;
      });
      expect(failed.error).toMatchObject({ code: 60402 });
      const events = await eventsOf(platform, token, runId);
      expect(events.map((e) => e.type)).toEqual(["run.queued", "run.failed"]);
    } finally {
      await pool.end();
    }
  });
});
