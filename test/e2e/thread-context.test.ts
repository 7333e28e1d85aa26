import { spawnSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { foldRun } from "@steward/contract";
import { listEndedThreadRuns, readStream } from "@steward/store";
import { buildHistory, historyBudget, HISTORY_MAX_TURNS } from "../../services/agent-runner/src/domain/thread-history";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf } from "../support/runs";
import { hasToolMessages, historyOf, ownInputOf, ownMessagesOf, recordedHistoryOf, startInThread, turn, waitForState } from "../support/thread-runs";

jest.setTimeout(240_000);

/*
 * Context across turns, through the whole platform: a run in a thread sees the thread's earlier turns — inputs,
 * answers, tool steps as ledger lines — truncated to the model's window, recorded once as `context.history`,
 * and replayed from that record (docs/threads.md "Context across turns").
 */

/** The model's window (LLM_CONTEXT_TOKENS), small on purpose. */
const WINDOW = 4000;
/** 30 % of the room the loop keeps (90 % of the window less the output ceiling: 2048 for a model it does not know). */
const BUDGET = Math.floor((WINDOW * 0.9 - 2048) * 0.3);

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
/** A word only the test's document holds, and a fact only that document (so only a search's result) holds. */
const CODENAME = `quillmere${hex(4)}`;
const FACT = `ZX-${hex(2)}-${hex(2)}`;
const FACT_PATTERN = /ZX-[0-9a-f]{4}-[0-9a-f]{4}/;

/** Long texts for the truncation scenario: a long earlier turn, and an answer that makes another turn heavy. */
const LONG_INPUT = `long: ${"Please keep this whole paragraph about the warehouse in mind. ".repeat(16)}`;
const LONG_ANSWER = `Noted. ${"The warehouse paragraph is kept in mind as asked. ".repeat(8)}`;
const SEARCHED_TWICE = `Searched twice. ${"Both searches returned the same vault note for the site. ".repeat(5)}`;

const search = (n: number): Reply => ({ toolCalls: [{ id: `s${n}`, name: "knowledge_search", arguments: JSON.stringify({ query: CODENAME, limit: 1 }) }] });

/**
 * The model: it answers the run's own input (after the thread's history), and what it knows is only what the
 * request holds. "recall" answers from any message that holds the fact; when none does it searches, as a
 * model would that needs the fact — so a turn that had to search again shows in its events.
 */
function script(req: ChatRequest): Reply {
  const input = ownInputOf(req);
  const results = ownMessagesOf(req).filter((m) => m.role === "tool").length;
  if (input.startsWith("look up")) return results === 0 ? search(0) : { text: "I looked it up: the note is in the knowledge base." };
  if (input.startsWith("recall")) {
    const seen = req.messages
      .map((m) => String(m.content ?? ""))
      .join("\n")
      .match(FACT_PATTERN);
    if (seen) return { text: `The combination is ${seen[0]}.` };
    return results === 0 ? search(0) : { text: "I could not find it." };
  }
  if (input.startsWith("ask")) {
    return results === 0 ? { toolCalls: [{ id: "q0", name: "ask_user", arguments: JSON.stringify({ question: "Which region?" }) }] } : { text: "answered" };
  }
  if (input.startsWith("search twice")) return results < 2 ? search(results) : { text: SEARCHED_TWICE };
  if (input.startsWith("search once")) return results < 1 ? search(results) : { text: "Found it once." };
  if (input.startsWith("long")) return { text: LONG_ANSWER };
  if (input.startsWith("unrelated")) return { text: "Paris is the capital of France." };
  return { text: "Done." };
}

/** Tool messages without the assistant's call before them, or calls without their result: none may exist. */
function orphans(messages: ChatRequest["messages"]): string[] {
  const open = new Set<string>();
  const found: string[] = [];
  for (const m of messages) {
    if (m.role === "assistant") for (const c of (m.tool_calls ?? []) as Array<{ id: string }>) open.add(c.id);
    if (m.role === "tool") {
      if (!open.delete(String(m.tool_call_id))) found.push(`result without call ${m.tool_call_id}`);
    } else if (m.role !== "assistant" && open.size > 0) found.push(`call without result ${[...open].join(",")}`);
  }
  if (open.size > 0) found.push(`call without result ${[...open].join(",")}`);
  return found;
}

describe("context across turns: a thread's runs see its earlier turns, truncated to the window, replayable", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let ana: string;
  /** The thread runs made by the tests, for the replay. */
  const threadRuns: string[] = [];
  let recallRun = "";
  let probe = { id: "", threadId: "" };

  const requestsFor = (input: string) => model.requests.filter((r) => ownInputOf(r) === input);
  const newThread = async (title: string) => {
    const created = await platform.http("POST", "/v1/threads", { token: ana, body: { title } });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const inThread = async (threadId: string, input: string) => {
    const done = await turn(platform, ana, threadId, input);
    threadRuns.push(done.id);
    return done;
  };

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake", LLM_CONTEXT_TOKENS: String(WINDOW) });
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    ana = await platform.token({ tenant: "acme", user: "ana" });
    const admin = await platform.token({ tenant: "acme", user: "root", roles: ["admin"] });
    const doc = await platform.http("POST", "/v1/knowledge/documents", {
      token: admin,
      body: {
        title: "Vault note",
        body: `Site ${CODENAME} keeps its vault combination as ${FACT}. Only the site manager knows it; the guards change it every quarter.`,
      },
    });
    expect(doc.status).toBe(201);
  });
  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("turn 3 answers with a fact only turn 1's tool result had, from the step ledger carried over, with no tool call of its own", async () => {
    const threadId = await newThread("vault");
    const first = await inThread(threadId, "look up the vault note of our site");
    expect(first.run.state).toBe("succeeded");
    expect(first.run.output.text).not.toMatch(FACT_PATTERN);
    const searched = (await eventsOf(platform, ana, first.id)).filter((e) => e.type === "tool_result");
    expect(searched.map((e) => [e.data.tool_name, e.data.result_code])).toEqual([["knowledge_search", "ok"]]);
    expect(JSON.stringify(searched[0].data.result)).toContain(FACT);
    // The thread's first run records an empty history.
    expect(await recordedHistoryOf(platform, ana, first.id)).toEqual({ thread_id: threadId, turns: [], dropped: [], tokens: 0, budget_tokens: BUDGET });

    const second = await inThread(threadId, "unrelated: what is the capital of France?");
    expect(second.run.output.text).toBe("Paris is the capital of France.");

    const recall = "recall: what was the vault combination you found earlier?";
    const third = await inThread(threadId, recall);
    recallRun = third.id;
    expect(third.run.state).toBe("succeeded");
    expect(third.run.output.text).toBe(`The combination is ${FACT}.`);
    // It asked the model once and called no tool: the fact came with the history.
    const thirdEvents = await eventsOf(platform, ana, third.id);
    expect(thirdEvents.filter((e) => ["tool_call", "tool.decided", "tool_result", "ask_user"].includes(e.type))).toEqual([]);
    expect(thirdEvents.filter((e) => e.type === "thought")).toEqual([]);
    const asked = requestsFor(recall);
    expect(asked).toHaveLength(1);

    // What the model saw: turns 1 and 2 as user and assistant messages, the fact only in turn 1's step note.
    const history = historyOf(asked[0]);
    expect(history.map((m) => m.role)).toEqual(["user", "user", "user", "assistant", "user", "assistant", "user"]);
    expect(history.map((m) => String(m.content).split("\n")[0])).toEqual([
      "Earlier turns of this conversation follow, oldest first.",
      "look up the vault note of our site",
      "Tool steps of that turn, oldest first (tool output, for reference only):",
      "I looked it up: the note is in the knowledge base.",
      "unrelated: what is the capital of France?",
      "Paris is the capital of France.",
      "End of the earlier turns. The current request follows.",
    ]);
    expect(asked[0].messages.filter((m) => String(m.content ?? "").includes(FACT))).toEqual([history[2]]);
    expect(String(history[2].content)).toMatch(/^- step 1 knowledge_search: ok /m);
    expect(asked[0].messages[0].role).toBe("system");
    expect(hasToolMessages(asked[0].messages)).toBe(false);

    const recorded = await recordedHistoryOf(platform, ana, third.id);
    expect(recorded.turns.map((t: any) => [t.run_id, t.status, t.steps.length, t.steps_dropped])).toEqual([
      [first.id, "succeeded", 1, 0],
      [second.id, "succeeded", 0, 0],
    ]);
    expect(recorded.turns[0].steps[0]).toContain(FACT);
    expect(recorded.dropped).toEqual([]);
    expect(recorded.tokens).toBeGreaterThan(0);
    expect(recorded.tokens).toBeLessThanOrEqual(BUDGET);
  });

  it("with a small window, drops the unanswered turn, then steps, then the oldest turns; records what; no tool call is orphaned", async () => {
    const threadId = await newThread("a long conversation");
    // A: ended without an answer (cancelled while it waited for the user).
    const asking = await startInThread(platform, ana, threadId, "ask: which region do you mean?");
    threadRuns.push(asking);
    await waitForState(platform, ana, asking, ["awaiting_input"]);
    expect((await platform.http("POST", `/v1/agents/runs/${asking}/cancel`, { token: ana })).status).toBe(200);
    expect((await waitForState(platform, ana, asking)).state).toBe("cancelled");
    // B: two tool steps and a long answer; C: a long input and answer; D: one tool step.
    const b = await inThread(threadId, "search twice: the vault note of our site");
    const c = await inThread(threadId, LONG_INPUT);
    const d = await inThread(threadId, "search once: the vault note again");
    expect([b.run.state, c.run.state, d.run.state]).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect((await eventsOf(platform, ana, b.id)).filter((e) => e.type === "tool_result")).toHaveLength(2);

    const question = "probe: what did we talk about?";
    const e = await inThread(threadId, question);
    probe = { id: e.id, threadId };
    const recorded = await recordedHistoryOf(platform, ana, e.id);
    expect(recorded.budget_tokens).toBe(BUDGET);
    expect(recorded.tokens).toBeLessThanOrEqual(BUDGET);
    // Oldest run first: the cancelled turn (rule 1), B whose two steps went before the whole turn did (rules 2
    // and 3), and D's one step (rule 2 reached it before rule 3 dropped B).
    expect(recorded.dropped).toEqual([
      { run_id: asking, part: "turn", reason: "budget", steps: 0, tokens: expect.any(Number) },
      { run_id: b.id, part: "turn", reason: "budget", steps: 2, tokens: expect.any(Number) },
      { run_id: d.id, part: "steps", reason: "budget", steps: 1, tokens: expect.any(Number) },
    ]);
    for (const drop of recorded.dropped) expect(drop.tokens).toBeGreaterThan(0);
    // The kept turns are the newest.
    expect(recorded.turns.map((t: any) => [t.run_id, t.answer === null, t.steps.length, t.steps_dropped])).toEqual([
      [c.id, false, 0, 0],
      [d.id, false, 0, 1],
    ]);

    const asked = requestsFor(question);
    expect(asked).toHaveLength(1);
    const history = historyOf(asked[0]);
    expect(history.map((m) => m.role)).toEqual(["user", "user", "assistant", "user", "assistant", "user"]);
    expect(history.map((m) => m.content)).toEqual([
      "Earlier turns of this conversation follow, oldest first (2 older turns left out to fit the window).",
      LONG_INPUT,
      LONG_ANSWER,
      "search once: the vault note again",
      "Found it once.",
      "End of the earlier turns. The current request follows.",
    ]);
    expect(hasToolMessages(asked[0].messages)).toBe(false);
    // No request of this suite, history or not, holds a tool call without its result or a result without its call.
    expect(model.requests.flatMap((r) => orphans(r.messages))).toEqual([]);
    expect(model.requests.filter((r) => hasToolMessages(historyOf(r)))).toEqual([]);
    expect(model.requests.some((r) => hasToolMessages(r.messages))).toBe(true); // the check above saw tool messages
  });

  it("replays the thread runs to their recorded ends; the history loads the same again; a recording without it diverges", async () => {
    expect(threadRuns).toHaveLength(8);
    expect(probe.id).not.toBe("");
    // A later turn in the probe's thread must not change what the probe's history is built from.
    const later = await inThread(probe.threadId, "unrelated: one more turn after the probe");

    const replay = (ids: string[]) =>
      spawnSync(process.execPath, [join(__dirname, "..", "..", "services", "agent-runner", "dist", "replay.js"), ...ids], {
        env: { ...process.env, DATABASE_URL: platform.databaseUrl },
        encoding: "utf8",
        timeout: 60_000,
      });
    const all = replay(threadRuns);
    expect(all.stderr).toBe("");
    expect(all.status).toBe(0);
    const states = await Promise.all(threadRuns.map(async (id) => (await platform.http("GET", `/v1/agents/runs/${id}`, { token: ana })).body.state));
    expect(states.filter((s) => s === "cancelled")).toHaveLength(1);
    const n = threadRuns.length;
    const verdicts = threadRuns.map((id, i) => `${id} ${states[i]} same`);
    expect(all.stdout).toBe([...verdicts, `${n} runs replayed: ${n} same, 0 diverged, 0 unfinished, 0 missing`, ""].join("\n"));

    // Loading again — the runs that ended before the run was created, read from their events — gives the history recorded.
    for (const runId of [recallRun, probe.id]) {
      const own = await readStream(pool, runId);
      const state = foldRun(own);
      const threadId = state.thread_id!;
      const ids = await listEndedThreadRuns(pool, { tenantId: "acme", createdBy: "ana", threadId, runId, endedBy: state.created_at! });
      expect(ids).not.toContain(later.id);
      const read = ids.slice(-HISTORY_MAX_TURNS);
      const runs = await Promise.all(read.map(async (id) => ({ runId: id, events: await readStream(pool, id) })));
      const again = buildHistory({ threadId, runs, unread: ids.slice(0, ids.length - read.length), budgetTokens: historyBudget(WINDOW, 2048) });
      expect(again).toEqual(own.find((ev) => ev.type === "context.history")!.data);
    }
    const probeThread = (await platform.http("GET", `/v1/threads/${probe.threadId}`, { token: ana })).body;
    expect(probeThread.last_run_id).toBe(later.id);

    // The recall run's recording copied without its context.history: the replay diverges where the history was due.
    const recorded = await readStream(pool, recallRun);
    const dueAt = recorded.find((ev) => ev.type === "context.history")!.metadata.seq;
    const copy = randomUUID();
    await pool.query(
      `INSERT INTO events (event_id, stream_id, tenant_id, version, type, data, metadata, recorded_at)
       SELECT gen_random_uuid(), $2, tenant_id, row_number() OVER (ORDER BY version), type, data, metadata, recorded_at
         FROM events WHERE stream_id = $1 AND type <> 'context.history'`,
      [recallRun, copy],
    );
    const tampered = replay([copy]);
    expect(tampered.status).toBe(1);
    expect(tampered.stdout).toBe(`${copy} succeeded DIVERGED at seq ${dueAt}\n1 runs replayed: 0 same, 1 diverged, 0 unfinished, 0 missing\n`);
    expect(tampered.stderr).toContain("expected: the thread's history (context.history)");
  });
});
