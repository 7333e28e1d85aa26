import { randomUUID } from "node:crypto";
import { addSeconds, foldRun, initialRunState, nowMicros, type ContextHistory, type RunEvent, type StoredRunEvent } from "@steward/contract";
import { createLogger, createPool, type Pool } from "@steward/platform";
import { appendRunEvents, createRunStreams, readStream } from "@steward/store";
import type { ToolExecApi } from "@steward/proto";
import { conversationOf } from "../domain/conversation";
import type { ChatMessage, ModelAnswer, ModelProvider, ModelRequest } from "../domain/model";
import { driveRun, type DriveDeps } from "./drive-run";
import { readTool } from "./fixtures/read-tool";
import { replayRun } from "./replay-run";
import type { RunContext } from "./run-context";
import { freshDatabase } from "../../../../test/support/databases";

/*
 * Context across turns with real PostgreSQL: runs of one thread driven in turn by the loop, a fake model that
 * records every request and answers from a script, and a fake tool-exec.
 */

const TENANT = "acme";
const USER = "u1";
/** A fact only run 1's tool result holds: run 1's answer does not repeat it. */
const FACT = "door code 4711-ZX";

const searchTool = readTool("knowledge_search", "knowledge.document.read", { query: { type: "string" } });

const usage = { input_tokens: 10, output_tokens: 5 };
const say = (text: string): ModelAnswer => ({ text, toolCalls: [], finishReason: "stop", usage, provider: "scripted" });
const search = (id: string, query: string): ModelAnswer => ({
  text: "",
  toolCalls: [{ id, name: "knowledge_search", arguments: JSON.stringify({ query }) }],
  finishReason: "tool_calls",
  usage,
  provider: "scripted",
});

describe("context across turns: runs of one thread driven in turn (PostgreSQL, fake model and tool-exec)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  const threadId = randomUUID();

  /** What the model was asked, per run, and what it answers next (per run, in order). */
  const requests = new Map<string, ChatMessage[][]>();
  const script = new Map<string, ModelAnswer[]>();
  let driving = "";
  const provider: ModelProvider = {
    name: "scripted",
    complete: async (req: ModelRequest) => {
      requests.set(driving, [...(requests.get(driving) ?? []), req.messages.map((m) => ({ ...m }))]);
      const next = script.get(driving)?.shift();
      if (!next) throw new Error(`no scripted answer left for run ${driving}`);
      return next;
    },
  };
  const passages: Record<string, unknown> = {
    lisbon: { passages: [{ title: "Offices", text: `The Lisbon office is on Rua Augusta; ${FACT} opens the side door.` }] },
    porto: { passages: [{ title: "Offices", text: "Porto has a co-working desk only." }] },
  };
  const toolExec = {
    invoke: async (req: { argumentsJson: string }) => {
      const { query } = JSON.parse(req.argumentsJson) as { query: string };
      return {
        fingerprint: `fp-${query}`,
        decision: { permit: true, code: "", policyIds: ["p1"] },
        resultCode: "ok",
        resultJson: JSON.stringify({ result: passages[query] ?? { passages: [] }, evidence: [] }),
        replayed: false,
        nextState: "",
      };
    },
  } as unknown as ToolExecApi;

  const deps = (contextTokens?: number): DriveDeps => ({
    pool,
    toolExec,
    provider,
    tools: [searchTool],
    logger: createLogger("thread-history-test", "silent"),
    namespace: "thr",
    runnerId: "runner-1",
    streams: createRunStreams({ pool, namespace: "thr" }),
    model: { name: "scripted", maxOutputTokens: 256, contextTokens },
  });

  /** A run queued in the thread as the gateway stores it (its run.queued and its projection row). */
  async function queue(input: string, thread: string | null = threadId): Promise<string> {
    const runId = randomUUID();
    const createdAt = nowMicros();
    const queued: RunEvent = {
      type: "run.queued",
      data: {
        input,
        mode: "agent",
        response_language: null,
        created_by: USER,
        created_at: createdAt,
        deadline_at: addSeconds(createdAt, 180),
        thread_id: thread,
      },
    };
    await appendRunEvents(pool, { runId, tenantId: TENANT, namespace: "thr", state: initialRunState, events: [queued] });
    return runId;
  }

  async function drive(runId: string, answers: ModelAnswer[], contextTokens?: number): Promise<StoredRunEvent[]> {
    driving = runId;
    script.set(runId, answers);
    const ctx: RunContext = { runId, tenantId: TENANT, userId: USER, lastDelivery: true, signal: new AbortController().signal };
    expect(await driveRun(deps(contextTokens), ctx)).toEqual({ kind: "finished" });
    return readStream(pool, runId);
  }

  const historyOf = (events: readonly StoredRunEvent[]) => events.find((e): e is ContextHistory & StoredRunEvent => e.type === "context.history");

  /** Every tool message answers a call of the assistant message before it, and every call is answered. */
  function expectNoOrphanedCalls(messages: readonly ChatMessage[]) {
    const open = new Set<string>();
    for (const m of messages) {
      if (m.role === "assistant") {
        expect(open.size).toBe(0);
        for (const c of m.tool_calls ?? []) open.add(c.id);
      } else if (m.role === "tool") {
        expect(open.has(m.tool_call_id)).toBe(true);
        open.delete(m.tool_call_id);
      }
    }
    expect(open.size).toBe(0);
  }

  let run1 = "";
  let run2 = "";
  let run3 = "";
  let late = "";
  let active = "";

  beforeAll(async () => {
    db = await freshDatabase("steward_runner_threads");
    pool = createPool(db.url, { max: 4 });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  it("the thread's first run records an empty history and asks the model exactly as a run without a thread", async () => {
    run1 = await queue("Where is the Lisbon office?");
    const events = await drive(run1, [search("call_1", "lisbon"), say("It is on Rua Augusta.")]);
    expect(events.map((e) => e.type)).toEqual([
      "run.queued",
      "run.started",
      "context.history",
      "thought",
      "tool_call",
      "tool.decided",
      "tool_result",
      "message",
      "run.succeeded",
    ]);
    expect(historyOf(events)?.data).toMatchObject({ thread_id: threadId, turns: [], dropped: [], tokens: 0 });

    const alone = await queue("Where is the Lisbon office?", null);
    const aloneEvents = await drive(alone, [search("call_1", "lisbon"), say("It is on Rua Augusta.")]);
    expect(aloneEvents.map((e) => e.type)).not.toContain("context.history");
    expect(requests.get(run1)).toEqual(requests.get(alone));
  });

  it("run 3 is shown runs 1 and 2 — a fact only run 1's tool result had among them — and nothing later or still active", async () => {
    run2 = await queue("And the Porto office?");
    await drive(run2, [say("Porto has no office of its own.")]);
    run3 = await queue("What opens the Lisbon side door?");
    // Neither a run still active nor one that ended after run 3 was created is an earlier turn.
    active = await queue("a run still queued");
    late = await queue("a run that ends after run 3 was created");
    await drive(late, [say("late answer")]);

    const events = await drive(run3, [say(`The ${FACT}.`)]);
    const [first] = requests.get(run3)!;
    const users = first
      .filter((m) => m.role === "user")
      .map((m) => m.content)
      .join("\n");
    expect(users).toContain(FACT);
    expect(
      first
        .filter((m) => m.role === "system")
        .map((m) => m.content)
        .join(""),
    ).not.toContain(FACT);
    expect(first.some((m) => m.role === "tool")).toBe(false);
    // Placement: system prompt, the history (runs 1 and 2, oldest first), then run 3's own input.
    expect(first[0].role).toBe("system");
    expect(first.at(-1)).toEqual({ role: "user", content: "What opens the Lisbon side door?" });
    const contents = first.map((m) => m.content ?? "");
    expect(contents.indexOf("Where is the Lisbon office?")).toBeLessThan(contents.indexOf("And the Porto office?"));
    expect(contents).toContain("It is on Rua Augusta.");
    expect(users).not.toContain("a run still queued");
    expect(users).not.toContain("late answer");

    const history = historyOf(events)!;
    expect(history.data.turns.map((t) => t.run_id)).toEqual([run1, run2]);
    expect(history.data.dropped).toEqual([]);
    expect(events.findIndex((e) => e.type === "context.history")).toBeLessThan(events.findIndex((e) => e.type === "message"));

    // The recorded event alone rebuilds the request the model got; the replay reproduces the run.
    const beforeAnswer = events.slice(
      0,
      events.findIndex((e) => e.type === "message"),
    );
    expect(conversationOf(beforeAnswer, foldRun(beforeAnswer))).toEqual(first);
    expect(replayRun(events)).toMatchObject({ finished: true, sameFinalState: true, divergence: undefined });
  });

  it("with a small window the history is truncated, the event names what was dropped, and no tool call loses its result", async () => {
    const run4 = await queue("Remind me what we found, and search Porto again.");
    // 600 tokens of window leave (540 - 256) × 0.3 = 85 tokens of history: not all four earlier turns fit.
    const events = await drive(run4, [search("call_9", "porto"), say("Done.")], 600);
    const history = historyOf(events)!.data;
    expect(history.budget_tokens).toBe(85);
    expect(history.tokens).toBeLessThanOrEqual(85);
    expect(history.dropped.length).toBeGreaterThan(0);
    const earlier = [run1, run2, run3, late];
    for (const d of history.dropped) expect(earlier).toContain(d.run_id);
    // What is kept and what is dropped account for every earlier turn; the newest is kept.
    const dropped = history.dropped.filter((d) => d.part === "turn").map((d) => d.run_id);
    expect([...dropped, ...history.turns.map((t) => t.run_id)].sort()).toEqual([...earlier].sort());
    expect(history.turns.at(-1)?.run_id).toBe(late);
    // The oldest goes first, its tool step with it (counted in what was dropped).
    expect(history.dropped.find((d) => d.run_id === run1)).toMatchObject({ part: "turn", reason: "budget", steps: 1 });
    expect(dropped).not.toContain(active);

    const asked = requests.get(run4)!;
    expect(asked).toHaveLength(2);
    for (const messages of asked) expectNoOrphanedCalls(messages);
    expect(asked[0].map((m) => m.content).join("\n")).toContain(`${dropped.length} older turn`);
    expect(replayRun(events)).toMatchObject({ finished: true, sameFinalState: true, divergence: undefined });
  });

  it("a replay whose recording lacks the history diverges where it was due", async () => {
    const events = await readStream(pool, run3);
    const without = events.filter((e) => e.type !== "context.history").map((e, i) => ({ ...e, metadata: { ...e.metadata, seq: i + 1 } })) as StoredRunEvent[];
    expect(replayRun(without).divergence).toMatchObject({ expected: "the thread's history (context.history)" });
  });
});
