import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { historyOf, ownInputOf, ownMessagesOf, recordedHistoryOf, startInThread, turn, waitForState } from "../support/thread-runs";

jest.setTimeout(240_000);

/*
 * Forking a thread, through the whole platform: POST /v1/threads/:id/fork makes a new thread holding the
 * original's runs up to and including one of them (their step ledger with them); the next turn in each thread
 * sees only its own line of the conversation, and the original is untouched (docs/threads.md "Fork").
 */

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
/** A word only the test's document holds, and a fact only that document (so only turn 1's search result) holds. */
const CODENAME = `brackenholt${hex(4)}`;
const FACT = `QV-${hex(2)}-${hex(2)}`;

const LOOK_UP = "look up the vault note of our site";
const SECOND = "second: the bravo question";
const THIRD = "third: the charlie question";
const FORK_NEXT = "fork next: the delta question";
const FORK_AGAIN = "fork again: the foxtrot question";
const ORIGINAL_NEXT = "original next: the echo question";
const answerTo = (input: string) => `answer to ${input.split(":")[0]}`;

/**
 * The model answers the run's own input (after the thread's history): "look up" searches the knowledge base
 * once, "ask" asks the user (so that run stays active), anything else is answered at once with a text naming it.
 */
function script(req: ChatRequest): Reply {
  const input = ownInputOf(req);
  const results = ownMessagesOf(req).filter((m) => m.role === "tool").length;
  if (input.startsWith("look up")) {
    if (results > 0) return { text: "I looked it up: the note is in the knowledge base." };
    return { toolCalls: [{ id: "s0", name: "knowledge_search", arguments: JSON.stringify({ query: CODENAME, limit: 1 }) }] };
  }
  if (input.startsWith("ask") && results === 0)
    return { toolCalls: [{ id: "q0", name: "ask_user", arguments: JSON.stringify({ question: "Which region?" }) }] };
  return { text: answerTo(input) };
}

const runner = join(__dirname, "..", "..", "services", "agent-runner", "dist");

describe("forking a thread at a run: the history up to it, the original untouched, each line of the conversation its own", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let ana: string;
  let bob: string;
  /** The original thread, its three turns, and the fork at turn 2 (made by the first test, used by the later ones). */
  let original = "";
  const turns: string[] = [];
  let fork = "";

  /** The history the model was shown for the run of `input` (its only request), as one text. */
  const historyShownFor = (input: string) => {
    const asked = model.requests.filter((r) => ownInputOf(r) === input);
    expect(asked).toHaveLength(1);
    return historyOf(asked[0])
      .map((m) => String(m.content ?? ""))
      .join("\n");
  };
  const post = (token: string, path: string, body?: unknown, headers?: Record<string, string>) => platform.http("POST", path, { token, body, headers });
  const get = (token: string, path: string) => platform.http("GET", path, { token });
  const newThread = async (title: string) => {
    const created = await post(ana, "/v1/threads", { title });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  /** The thread's stream and projection row as PostgreSQL holds them. */
  const stored = async (threadId: string) => ({
    events: (await pool.query("SELECT version, type, data, metadata FROM events WHERE stream_id = $1 ORDER BY version", [threadId])).rows,
    row: (await pool.query("SELECT * FROM threads WHERE id = $1", [threadId])).rows[0],
  });
  /** What a refused request must not have written: threads, runs and events of the tenant. */
  const written = async () =>
    (
      await pool.query(
        `SELECT (SELECT count(*) FROM threads WHERE tenant_id = 'acme')::int AS threads, (SELECT count(*) FROM runs WHERE tenant_id = 'acme')::int AS runs,
                (SELECT count(*) FROM events WHERE tenant_id = 'acme')::int AS events`,
      )
    ).rows[0];
  const replay = (runIds: string[]) =>
    spawnSync(process.execPath, [join(runner, "replay.js"), ...runIds], {
      env: { ...process.env, DATABASE_URL: platform.databaseUrl },
      encoding: "utf8",
      timeout: 60_000,
    });

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    ana = await platform.token({ tenant: "acme", user: "ana" });
    bob = await platform.token({ tenant: "acme", user: "bob" });
    const admin = await platform.token({ tenant: "acme", user: "root", roles: ["admin"] });
    const doc = await post(admin, "/v1/knowledge/documents", {
      title: "Vault note",
      body: `Site ${CODENAME} keeps its vault combination as ${FACT}. Only the site manager knows it; the guards change it every quarter.`,
    });
    expect(doc.status).toBe(201);
  });
  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("forks at turn 2: a new thread listing turns 1-2 as inherited; the original's events and row are unchanged", async () => {
    original = await newThread("vault");
    for (const input of [LOOK_UP, SECOND, THIRD]) {
      const done = await turn(platform, ana, original, input);
      expect([input, done.run.state]).toEqual([input, "succeeded"]);
      turns.push(done.id);
    }
    const before = await stored(original);

    const forked = await post(ana, `/v1/threads/${original}/fork`, { at_run_id: turns[1], title: "vault, the other way" });
    expect(forked.status).toBe(201);
    fork = forked.body.id;
    expect(forked.headers.get("location")).toBe(`/v1/threads/${fork}`);
    expect(forked.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: "vault, the other way",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      updated_at: forked.body.created_at,
      archived_at: null,
      run_count: 0,
      last_run_id: null,
      forked_from: { thread_id: original, run_id: turns[1] },
    });
    expect(fork).not.toBe(original);

    const view = (await get(ana, `/v1/threads/${fork}`)).body;
    expect(view).toMatchObject({ id: fork, run_count: 0, inherited_run_count: 2, forked_from: { thread_id: original, run_id: turns[1] } });
    expect(view.runs.map((r: { id: string; input: string }) => [r.id, r.input])).toEqual([
      [turns[0], LOOK_UP],
      [turns[1], SECOND],
    ]);
    // The fork's stream opens with its creation and the fork's origin; the inherited runs are named, not copied.
    const forkStored = await stored(fork);
    expect(forkStored.events.map((e: { type: string }) => e.type)).toEqual(["thread.created", "thread.forked"]);
    expect(forkStored.events[1].data).toEqual({ forked_from: { thread_id: original, run_id: turns[1] }, inherited_run_ids: turns.slice(0, 2) });
    expect((await pool.query("SELECT count(*)::int AS n FROM runs WHERE thread_id = $1", [fork])).rows[0].n).toBe(0);

    expect(await stored(original)).toEqual(before);
    const originalView = (await get(ana, `/v1/threads/${original}`)).body;
    expect(originalView).toMatchObject({ run_count: 3, inherited_run_count: 0, forked_from: null, last_run_id: turns[2] });
    expect(originalView.runs.map((r: { id: string }) => r.id)).toEqual(turns);
  });

  it("the next turn in each thread diverges: the fork sees turns 1-2 (turn 1's tool step too), the original 1-3, neither the other's", async () => {
    const forkNext = await turn(platform, ana, fork, FORK_NEXT);
    expect(forkNext.run.output.text).toBe(answerTo(FORK_NEXT));
    const shownInFork = historyShownFor(FORK_NEXT);
    for (const seen of [LOOK_UP, FACT, SECOND, answerTo(SECOND)]) expect(shownInFork).toContain(seen);
    for (const unseen of [THIRD, answerTo(THIRD)]) expect(shownInFork).not.toContain(unseen);
    expect(shownInFork.indexOf(LOOK_UP)).toBeLessThan(shownInFork.indexOf(SECOND));
    const recorded = await recordedHistoryOf(platform, ana, forkNext.id);
    expect(recorded.thread_id).toBe(fork);
    expect(recorded.turns.map((t: { run_id: string }) => t.run_id)).toEqual(turns.slice(0, 2));
    expect(recorded.turns[0].steps.join("\n")).toContain(FACT);

    // Written after the fork's turn ended, the original's next turn still sees only its own line.
    const originalNext = await turn(platform, ana, original, ORIGINAL_NEXT);
    expect(originalNext.run.output.text).toBe(answerTo(ORIGINAL_NEXT));
    const shownInOriginal = historyShownFor(ORIGINAL_NEXT);
    for (const seen of [LOOK_UP, FACT, SECOND, THIRD, answerTo(THIRD)]) expect(shownInOriginal).toContain(seen);
    for (const unseen of [FORK_NEXT, answerTo(FORK_NEXT)]) expect(shownInOriginal).not.toContain(unseen);
    expect((await recordedHistoryOf(platform, ana, originalNext.id)).turns.map((t: { run_id: string }) => t.run_id)).toEqual(turns);

    // The fork's later turn: the inherited turns, then the fork's own, and still nothing of the original's.
    const forkAgain = await turn(platform, ana, fork, FORK_AGAIN);
    const shownAgain = historyShownFor(FORK_AGAIN);
    for (const seen of [LOOK_UP, SECOND, FORK_NEXT, answerTo(FORK_NEXT)]) expect(shownAgain).toContain(seen);
    for (const unseen of [THIRD, ORIGINAL_NEXT]) expect(shownAgain).not.toContain(unseen);
    expect(shownAgain.indexOf(SECOND)).toBeLessThan(shownAgain.indexOf(FORK_NEXT));
    expect((await recordedHistoryOf(platform, ana, forkAgain.id)).turns.map((t: { run_id: string }) => t.run_id)).toEqual([...turns.slice(0, 2), forkNext.id]);

    const view = (await get(ana, `/v1/threads/${fork}`)).body;
    expect(view).toMatchObject({ run_count: 2, inherited_run_count: 2, last_run_id: forkAgain.id });
    expect(view.runs.map((r: { id: string }) => r.id)).toEqual([...turns.slice(0, 2), forkNext.id, forkAgain.id]);
    expect((await get(ana, `/v1/threads/${original}`)).body.runs.map((r: { id: string }) => r.id)).toEqual([...turns, originalNext.id]);

    // Replay reproduces each run from its own record, the history it was shown included.
    const replayed = replay([forkNext.id, forkAgain.id, originalNext.id]);
    expect(replayed.stderr).toBe("");
    expect(replayed.stdout).toContain(`${forkNext.id} succeeded same\n${forkAgain.id} succeeded same\n${originalNext.id} succeeded same\n`);
    expect(replayed.status).toBe(0);

    // A fork of the fork, at one of its inherited runs, holds the runs up to that one.
    const nested = await post(ana, `/v1/threads/${fork}/fork`, { at_run_id: turns[0] });
    expect(nested.status).toBe(201);
    expect(nested.body).toMatchObject({ title: null, forked_from: { thread_id: fork, run_id: turns[0] } });
    expect((await get(ana, `/v1/threads/${nested.body.id}`)).body.runs.map((r: { id: string }) => r.id)).toEqual([turns[0]]);
  });

  it("refuses with nothing written: another's or an unknown thread (404), a run not of the thread (422), a run still active (409), a bad body (400)", async () => {
    const busy = await newThread("busy");
    const waiting = await startInThread(platform, ana, busy, "ask where we ship");
    await waitForState(platform, ana, waiting, ["awaiting_input"]);
    const before = await written();
    const originalBefore = await stored(original);

    for (const missing of [original, "00000000-0000-4000-8000-000000000000"]) {
      expect((await post(bob, `/v1/threads/${missing}/fork`, { at_run_id: turns[0] })).body).toMatchObject({
        status: 404,
        code: 10050,
        detail: "thread not found",
      });
    }
    expect((await post(ana, "/v1/threads/not-a-thread/fork", { at_run_id: turns[0] })).body).toMatchObject({ status: 404, code: 10050 });
    // A run of another thread of the caller's (the original's later turn is not the fork's), one of nobody's.
    for (const stranger of [turns[2], waiting, "00000000-0000-4000-8000-000000000000"]) {
      expect((await post(ana, `/v1/threads/${fork}/fork`, { at_run_id: stranger })).body).toMatchObject({
        status: 422,
        code: 10430,
        detail: "at_run_id is not a run of this thread",
      });
    }
    expect((await post(ana, `/v1/threads/${busy}/fork`, { at_run_id: waiting })).body).toMatchObject({ status: 409, code: 10090 });

    const malformed: unknown[] = [
      undefined,
      {},
      ["x"],
      { at_run_id: null },
      { at_run_id: "not-a-uuid" },
      { at_run_id: turns[0].toUpperCase() },
      { at_run_id: turns[0], title: null },
      { at_run_id: turns[0], title: 5 },
      { at_run_id: turns[0], thread_id: original },
    ];
    for (const body of malformed) {
      const res = await post(ana, `/v1/threads/${original}/fork`, body);
      expect([body, res.status, res.body.code]).toEqual([body, 400, 10001]);
    }
    expect((await platform.http("POST", `/v1/threads/${original}/fork?x=1`, { token: ana, body: { at_run_id: turns[0] } })).body).toMatchObject({
      status: 400,
      code: 10001,
    });
    for (const title of ["", "   ", "x".repeat(201), "two\nlines"]) {
      expect((await post(ana, `/v1/threads/${original}/fork`, { at_run_id: turns[0], title })).body).toMatchObject({ status: 422, code: 10430 });
    }
    expect(await written()).toEqual(before);
    expect(await stored(original)).toEqual(originalBefore);

    expect((await post(ana, `/v1/agents/runs/${waiting}/cancel`)).status).toBe(200);
    await waitForState(platform, ana, waiting);
  });

  it("an Idempotency-Key makes a retried fork answer the fork made first; another request with the key is 422; an archived thread forks", async () => {
    const headers = { "idempotency-key": "fork-retry-1" };
    const first = await post(ana, `/v1/threads/${original}/fork`, { at_run_id: turns[0] }, headers);
    expect(first.status).toBe(201);
    const before = await written();
    const retry = await post(ana, `/v1/threads/${original}/fork`, { at_run_id: turns[0] }, headers);
    expect([retry.status, retry.body, retry.headers.get("location")]).toEqual([201, first.body, `/v1/threads/${first.body.id}`]);
    expect((await post(ana, `/v1/threads/${original}/fork`, { at_run_id: turns[1] }, headers)).body).toMatchObject({ status: 422, code: 10430 });
    expect((await post(ana, `/v1/threads/${fork}/fork`, { at_run_id: turns[0] }, headers)).body).toMatchObject({ status: 422, code: 10430 });
    expect((await post(ana, "/v1/threads", {}, headers)).body).toMatchObject({ status: 422, code: 10430 });
    expect(await written()).toEqual(before);
    // Another user's key space is their own (bob's own thread, forked with the same key).
    const bobs = await post(bob, "/v1/threads", { title: "bob's" });
    const bobRun = await turn(platform, bob, bobs.body.id, SECOND);
    const bobFork = await post(bob, `/v1/threads/${bobs.body.id}/fork`, { at_run_id: bobRun.id }, headers);
    expect(bobFork.status).toBe(201);
    expect(bobFork.body.id).not.toBe(first.body.id);

    // Forking reads the history only: an archived thread may be forked (and stays archived, untouched).
    expect((await platform.http("DELETE", `/v1/threads/${original}`, { token: ana })).status).toBe(200);
    const archivedBefore = await stored(original);
    const fromArchived = await post(ana, `/v1/threads/${original}/fork`, { at_run_id: turns[2] });
    expect(fromArchived.status).toBe(201);
    expect(fromArchived.body).toMatchObject({ archived_at: null, forked_from: { thread_id: original, run_id: turns[2] } });
    expect(await stored(original)).toEqual(archivedBefore);
  });
});
