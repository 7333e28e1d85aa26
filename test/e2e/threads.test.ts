import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

// Threads, a conversation of several runs (docs/threads.md). The model answers at once, unless a user
// message holds "ask" and nothing was asked yet in this run: then it asks the user, so that run stays active
// (awaiting_input) until answered or cancelled. (The runner may show a thread's earlier turns as user and
// assistant messages, never as tool messages, so this holds with or without them.)
function script(req: ChatRequest): Reply {
  const asked = req.messages.some((m) => m.role === "tool");
  const wantsQuestion = req.messages.some((m) => m.role === "user" && String(m.content).startsWith("ask"));
  if (wantsQuestion && !asked) return { toolCalls: [{ id: "q0", name: "ask_user", arguments: JSON.stringify({ question: "Which region?" }) }] };
  return { text: "answered" };
}

const TERMINAL = ["succeeded", "failed", "cancelled"];

describe("threads: a conversation of runs, creator-only, one run at a time", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let ana: string;
  let bob: string;

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    ana = await platform.token({ tenant: "acme", user: "ana" });
    bob = await platform.token({ tenant: "acme", user: "bob" });
  });
  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  const post = (token: string, path: string, body?: unknown, headers?: Record<string, string>) => platform.http("POST", path, { token, body, headers });
  const get = (token: string, path: string) => platform.http("GET", path, { token });
  const newThread = async (title?: string) => {
    const created = await post(ana, "/v1/threads", title === undefined ? {} : { title });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const runIn = (threadId: string, input: string, token = ana) => post(token, "/v1/agents/runs", { input, thread_id: threadId });
  const waitState = (runId: string, states: string[]) =>
    waitFor(
      async () => {
        const run = (await get(ana, `/v1/agents/runs/${runId}`)).body;
        return states.includes(run.state) ? run : undefined;
      },
      { timeoutMs: 60_000, what: `run ${runId} to reach ${states.join("|")}` },
    );
  /** What a refused request must not have written: threads, runs and events of the tenant. */
  const written = async () =>
    (
      await pool.query(
        `SELECT (SELECT count(*) FROM threads WHERE tenant_id = 'acme')::int AS threads, (SELECT count(*) FROM runs WHERE tenant_id = 'acme')::int AS runs,
                (SELECT count(*) FROM events WHERE tenant_id = 'acme')::int AS events`,
      )
    ).rows[0];

  it("creates, lists, and reads a thread with its runs in order after two runs complete", async () => {
    const created = await post(ana, "/v1/threads", { title: "Refund questions" });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe(`/v1/threads/${created.body.id}`);
    expect(created.body).toEqual({
      id: expect.any(String),
      title: "Refund questions",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      updated_at: created.body.created_at,
      archived_at: null,
      run_count: 0,
      last_run_id: null,
      forked_from: null,
    });
    const untitled = await platform.http("POST", "/v1/threads", { token: ana });
    expect([untitled.status, untitled.body.title]).toEqual([201, null]);

    const id = created.body.id as string;
    const first = await runIn(id, "first question");
    expect(first.status).toBe(201);
    expect(first.body).not.toHaveProperty("thread_id");
    await waitState(first.body.id, TERMINAL);
    const second = await runIn(id, "second question");
    expect(second.status).toBe(201);
    await waitState(second.body.id, TERMINAL);

    const thread = await get(ana, `/v1/threads/${id}`);
    expect(thread.status).toBe(200);
    expect(thread.body).toMatchObject({ id, title: "Refund questions", run_count: 2, last_run_id: second.body.id, archived_at: null, inherited_run_count: 0 });
    expect(thread.body.runs.map((r: { id: string; state: string; input: string }) => [r.id, r.state, r.input])).toEqual([
      [first.body.id, "succeeded", "first question"],
      [second.body.id, "succeeded", "second question"],
    ]);
    expect(thread.body.updated_at > thread.body.created_at).toBe(true);
    // The run names its thread in its first event.
    expect((await eventsOf(platform, ana, first.body.id))[0]).toMatchObject({ type: "run.queued", data: { thread_id: id } });

    const list = await get(ana, "/v1/threads?page=1&page_size=100");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ page: 1, page_size: 100 });
    // Most recently active first: the thread that just got runs comes before the untitled one made earlier.
    const ids = list.body.items.map((t: { id: string }) => t.id);
    expect(ids.indexOf(id)).toBeLessThan(ids.indexOf(untitled.body.id));
    expect(list.body.total).toBe(list.body.items.length);
    expect((await get(bob, "/v1/threads")).body.items.map((t: { id: string }) => t.id)).not.toContain(id);
  });

  it("a thread of another user is 404 on GET, on a run, on DELETE, exactly like a missing one; nothing is written", async () => {
    const id = await newThread("ana's");
    const before = await written();
    for (const missing of [id, "00000000-0000-4000-8000-000000000000"]) {
      expect((await get(bob, `/v1/threads/${missing}`)).body).toMatchObject({ status: 404, code: 10050, detail: "thread not found" });
      expect((await runIn(missing, "peek", bob)).body).toMatchObject({ status: 404, code: 10050, detail: "thread not found" });
      expect((await platform.http("DELETE", `/v1/threads/${missing}`, { token: bob })).body).toMatchObject({ status: 404, code: 10050 });
    }
    expect((await get(ana, "/v1/threads/not-a-thread")).body).toMatchObject({ status: 404, code: 10050 });
    expect(await written()).toEqual(before);
    expect((await get(ana, `/v1/threads/${id}`)).body).toMatchObject({ archived_at: null, run_count: 0 });
  });

  it("a run still active refuses the next one (409); of concurrent POSTs exactly one is created", async () => {
    const id = await newThread("one at a time");
    const waiting = await runIn(id, "ask first");
    expect(waiting.status).toBe(201);
    await waitState(waiting.body.id, ["awaiting_input"]);
    const before = await written();
    expect((await runIn(id, "too soon")).body).toMatchObject({ status: 409, code: 10090 });
    expect(await written()).toEqual(before);
    expect((await post(ana, `/v1/agents/runs/${waiting.body.id}/input`, { answer: "EU" })).status).toBe(200);
    expect((await waitState(waiting.body.id, TERMINAL)).state).toBe("succeeded");

    const racing = await Promise.all(Array.from({ length: 6 }, (_, i) => runIn(id, `ask racer ${i}`)));
    const statuses = racing.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    for (const refused of racing.filter((r) => r.status === 409)) expect(refused.body.code).toBe(10090);
    const winner = racing.find((r) => r.status === 201)!.body.id as string;
    const thread = (await get(ana, `/v1/threads/${id}`)).body;
    expect(thread.runs.map((r: { id: string }) => r.id)).toEqual([waiting.body.id, winner]);
    expect(thread.run_count).toBe(2);
    expect((await post(ana, `/v1/agents/runs/${winner}/cancel`)).status).toBe(200);
    await waitState(winner, TERMINAL);
  });

  it("archiving keeps the thread and its runs, takes it off the list, and refuses new runs (409); DELETE twice is the same answer", async () => {
    const id = await newThread("to archive");
    const run = await runIn(id, "before archiving");
    await waitState(run.body.id, TERMINAL);
    const archived = await platform.http("DELETE", `/v1/threads/${id}`, { token: ana });
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ id, archived_at: expect.any(String), run_count: 1, last_run_id: run.body.id });
    const again = await platform.http("DELETE", `/v1/threads/${id}`, { token: ana });
    expect([again.status, again.body]).toEqual([200, archived.body]);
    const before = await written();
    expect((await runIn(id, "after archiving")).body).toMatchObject({ status: 409, code: 10090 });
    expect(await written()).toEqual(before);
    expect((await get(ana, `/v1/threads/${id}`)).body).toMatchObject({ archived_at: archived.body.archived_at, runs: [{ id: run.body.id }] });
    expect((await get(ana, "/v1/threads?page_size=100")).body.items.map((t: { id: string }) => t.id)).not.toContain(id);
  });

  it("an Idempotency-Key makes a retried POST /v1/threads return the thread created first; another body with it is 422", async () => {
    const headers = { "idempotency-key": "thread-retry-1" };
    const first = await post(ana, "/v1/threads", { title: "once" }, headers);
    const retry = await post(ana, "/v1/threads", { title: "once" }, headers);
    expect([first.status, retry.status, retry.body]).toEqual([201, 201, first.body]);
    expect((await post(ana, "/v1/threads", { title: "other" }, headers)).body).toMatchObject({ status: 422, code: 10430 });
    // Another user's key space is their own.
    expect((await post(bob, "/v1/threads", { title: "once" }, headers)).body.id).not.toBe(first.body.id);
  });

  it("bad input is 400/10001 or 422/10430 with nothing written", async () => {
    const id = await newThread("kept");
    const before = await written();
    const malformed: Array<[string, string, unknown]> = [
      ["POST", "/v1/threads", { title: 5 }],
      ["POST", "/v1/threads", { title: null }],
      ["POST", "/v1/threads", { title: "x", pinned: true }],
      ["POST", "/v1/threads", ["x"]],
      ["POST", "/v1/agents/runs", { input: "hi", thread_id: "not-a-uuid" }],
      ["POST", "/v1/agents/runs", { input: "hi", thread_id: null }],
      ["POST", "/v1/agents/runs", { input: "hi", thread_id: id.toUpperCase() }],
      ["GET", "/v1/threads?page=0", undefined],
      ["GET", "/v1/threads?page_size=101", undefined],
      ["GET", "/v1/threads?sort=created_at%20desc", undefined],
      ["GET", "/v1/threads?page=1&page=2", undefined],
      ["GET", `/v1/threads/${id}?x=1`, undefined],
    ];
    for (const [method, path, body] of malformed) {
      const res = await platform.http(method, path, { token: ana, body });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 400, 10001]);
    }
    for (const title of ["", "   ", "x".repeat(201), "two\nlines"]) {
      expect((await post(ana, "/v1/threads", { title })).body).toMatchObject({ status: 422, code: 10430 });
    }
    expect((await post(ana, "/v1/agents/runs", { input: "   ", thread_id: id })).body).toMatchObject({ status: 422, code: 10430 });
    expect(await written()).toEqual(before);
  });
});
