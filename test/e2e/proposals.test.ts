import { spawnSync } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(240_000);

// Governed memory (docs/memory.md). The fake model reads the run's own input (after a thread's
// earlier turns, which end with the history's closing note) as a command:
//   `propose <plan>` — the plan's propose_knowledge calls (set by the test, so that what the model proposes is its
//   own text, never the user's input), one per step, in order, then it answers;
//   `search <query>` — one knowledge_search, then it answers.
// The run's own tool messages (a thread's earlier turns never hold any) say how far it got.
const plans = new Map<string, object[]>();
const HISTORY_END = "End of the earlier turns. The current request follows.";

function ownInput(req: ChatRequest): string {
  const users = req.messages.filter((m) => m.role === "user").map((m) => String(m.content));
  const end = users.indexOf(HISTORY_END);
  return users[end + 1] ?? "";
}

function script(req: ChatRequest, index: number): Reply {
  const input = ownInput(req);
  const done = req.messages.filter((m) => m.role === "tool").length;
  if (input.startsWith("propose ")) {
    const calls = plans.get(input.slice("propose ".length)) ?? [];
    if (done < calls.length) return { toolCalls: [{ id: `p${index}`, name: "propose_knowledge", arguments: JSON.stringify(calls[done]) }] };
    return { text: "proposed" };
  }
  if (input.startsWith("search ") && done === 0) {
    return { toolCalls: [{ id: `s${index}`, name: "knowledge_search", arguments: JSON.stringify({ query: input.slice("search ".length) }) }] };
  }
  return { text: "answered from the knowledge base" };
}

type Proposal = {
  id: string;
  title: string;
  status: string;
  thread_id: string | null;
  run_id: string;
  step_no: number;
  proposed_by: string;
  document_id: string | null;
};

const fact = (title: string, content: string, evidence_quote?: string) => ({ title, content, ...(evidence_quote ? { evidence_quote } : {}) });

describe("governed memory: the agent proposes, a person applies or dismisses", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let ana: string;
  let bob: string;
  let root: string;

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    // Each service as its own PostgreSQL role: the proposals' grants (migration 022) are what the services use.
    platform = await startTestPlatform({ STEWARD_TEST_HOOKS: "0", LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake" }, { roles: true });
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    ana = await platform.token({ tenant: "acme", user: "ana" });
    bob = await platform.token({ tenant: "acme", user: "bob" });
    root = await platform.token({ tenant: "acme", user: "root", roles: ["admin"] });
  });
  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  const post = (token: string, path: string, body?: unknown) => platform.http("POST", path, { token, body });
  const get = (token: string, path: string) => platform.http("GET", path, { token });
  const newThread = async () => {
    const created = await post(ana, "/v1/threads", {});
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  /** Runs `input` (in a thread when given) as ana and waits for its end; returns the final snapshot. */
  async function run(input: string, threadId?: string, token = ana): Promise<any> {
    const created = await post(token, "/v1/agents/runs", threadId ? { input, thread_id: threadId } : { input });
    expect(created.status).toBe(201);
    return waitFor(
      async () => {
        const r = (await get(token, `/v1/agents/runs/${created.body.id}`)).body;
        return ["succeeded", "failed", "cancelled"].includes(r.state) ? r : undefined;
      },
      { timeoutMs: 60_000, what: `run ${created.body.id} to end` },
    );
  }
  /** The runs that proposed, for the replay at the end. */
  const proposing: string[] = [];
  const propose = async (calls: object[], threadId?: string, token = ana) => {
    const plan = `plan-${plans.size + 1}`;
    plans.set(plan, calls);
    const done = await run(`propose ${plan}`, threadId, token);
    proposing.push(done.id);
    return done;
  };
  const resultsOf = async (runId: string, token = ana) =>
    (await eventsOf(platform, token, runId)).filter((e) => e.type === "tool_result" && e.data.tool_name === "propose_knowledge").map((e) => e.data);
  const listOwn = async (query: string, token = ana): Promise<Proposal[]> => {
    const listed = await get(token, `/v1/knowledge/proposals?${query}`);
    expect(listed.status).toBe(200);
    return listed.body.items;
  };
  const storedOfRun = async (runId: string) => (await pool.query("SELECT count(*)::int AS n FROM knowledge_proposals WHERE run_id = $1", [runId])).rows[0].n;

  it("a run in a thread proposes three times: two are queued pending, the third gets PROPOSAL_LIMIT_REACHED; the stream shows them", async () => {
    const thread = await newThread();
    const done = await propose(
      [
        fact("Greenland shipping", "Parcels to Greenland travel by the weekly Nuuk ferry.", "shipped on the weekly ferry"),
        fact("Iceland shipping", "Parcels to Iceland fly via Keflavik twice a week."),
        fact("Faroe shipping", "Parcels to the Faroe Islands go by the Smyril ferry."),
      ],
      thread,
    );
    expect(done.state).toBe("succeeded");
    const results = await resultsOf(done.id);
    expect(results.map((r) => r.result_code)).toEqual(["ok", "ok", "PROPOSAL_LIMIT_REACHED"]);
    expect(results[2].result).toMatchObject({ error_code: "PROPOSAL_LIMIT_REACHED", limit: "run", max: 2 });

    const listed = await listOwn(`thread_id=${thread}`);
    expect(listed.map((p) => [p.title, p.status, p.run_id, p.thread_id, p.proposed_by])).toEqual([
      ["Iceland shipping", "pending", done.id, thread, "ana"],
      ["Greenland shipping", "pending", done.id, thread, "ana"],
    ]);
    expect(listed[1]).toMatchObject({ evidence_quote: "shipped on the weekly ferry", decided_at: null, decided_by: null, document_id: null });

    // The proposal events: each queued proposal right after its tool result, with the result's proposal_id and step.
    const events = await eventsOf(platform, ana, done.id);
    const proposed = events.filter((e) => e.type === "knowledge.proposed");
    expect(proposed.map((e) => e.data.proposal_id).sort()).toEqual(listed.map((p) => p.id).sort());
    for (const e of proposed) {
      const before = events.find((x) => x.seq === e.seq - 1)!;
      expect(before).toMatchObject({ type: "tool_result", data: { call_id: e.data.call_id, result: { proposal_id: e.data.proposal_id } } });
      expect(listed.find((p) => p.id === e.data.proposal_id)?.step_no).toBe(e.data.step_no);
    }
    expect(
      results
        .slice(0, 2)
        .map((r) => r.result.proposal_id)
        .sort(),
    ).toEqual(listed.map((p) => p.id).sort());
  });

  it("a thread with 5 proposals pending refuses a later run's proposal with PROPOSAL_LIMIT_REACHED (thread)", async () => {
    const thread = await newThread();
    const n = (i: number) => fact(`Depot ${i}`, `Depot number ${i} opens at ${i + 6} o'clock.`);
    await propose([n(1), n(2)], thread);
    await propose([n(3), n(4)], thread);
    await propose([n(5)], thread);
    expect(await listOwn(`thread_id=${thread}&status=pending`)).toHaveLength(5);
    const later = await propose([n(6)], thread);
    const [refused] = await resultsOf(later.id);
    expect(refused).toMatchObject({ result_code: "PROPOSAL_LIMIT_REACHED", result: { limit: "thread", max: 5 } });
    expect(await storedOfRun(later.id)).toBe(0);
    expect(await listOwn(`thread_id=${thread}`)).toHaveLength(5);
  });

  it("rejects a proposal carrying a secret, SQL or a table name with PROPOSAL_REJECTED; nothing is stored and the secret is not echoed", async () => {
    const secret = "sk-live-9aF3kQ2mZ7xR1pL8vT4w";
    const done = await propose([
      fact("API access", `Call the billing API with the key ${secret} in the header.`),
      fact("Order lookup", "To list orders run SELECT id, total FROM orders WHERE paid."),
      fact("Where things live", "Documents are kept in kb_documents with their chunks."),
    ]);
    expect(done.state).toBe("succeeded");
    const results = await resultsOf(done.id);
    expect(results.map((r) => [r.result_code, r.result.reason])).toEqual([
      ["PROPOSAL_REJECTED", "secret"],
      ["PROPOSAL_REJECTED", "sql"],
      ["PROPOSAL_REJECTED", "table_name"],
    ]);
    expect(await storedOfRun(done.id)).toBe(0);
    expect((await listOwn("scope=tenant", root)).map((p) => p.run_id)).not.toContain(done.id);
    // Only the model's own call records what it sent (its thought and tool_call: what the model did, replayed as
    // recorded); no event decided after it — the PDP's decision, the result, the answer — echoes it.
    const events = await eventsOf(platform, ana, done.id);
    expect(events.filter((e) => JSON.stringify(e).includes(secret)).map((e) => e.type)).toEqual(["thought", "tool_call"]);
    const after = events.filter((e) => e.type !== "thought" && e.type !== "tool_call");
    expect(after.filter((e) => e.type === "tool_result")).toHaveLength(3);
    expect(JSON.stringify(after)).not.toContain("FROM orders");
    expect(JSON.stringify(after)).not.toContain("9aF3kQ2m");
    expect(events.some((e) => e.type === "knowledge.proposed")).toBe(false);
  });

  it("applying makes a document with provenance that the next run's knowledge_search finds; pending and dismissed proposals are never found", async () => {
    const thread = await newThread();
    const proposing = await propose(
      [
        fact("Svalbard shipping", "Parcels to Svalbard travel by the Longyearbyen cargo barge."),
        fact("Zanzibar shipping", "Parcels to Zanzibar travel by dhow from Dar."),
      ],
      thread,
    );
    const [zanzibar, svalbard] = await listOwn(`thread_id=${thread}`);
    expect([svalbard.title, zanzibar.title]).toEqual(["Svalbard shipping", "Zanzibar shipping"]);

    // Pending: not used.
    const early = await run("search Longyearbyen cargo barge", thread);
    expect(early.output.evidence).toEqual([]);

    const applied = await post(ana, `/v1/knowledge/proposals/${svalbard.id}/apply`);
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ id: svalbard.id, status: "applied", decided_by: "ana", document_id: expect.any(String), run_id: proposing.id });
    expect(applied.body.decided_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const dismissed = await platform.http("POST", `/v1/knowledge/proposals/${zanzibar.id}/dismiss`, { token: ana, body: {} });
    expect(dismissed.status).toBe(200);
    expect(dismissed.body).toMatchObject({ status: "dismissed", decided_by: "ana", document_id: null });

    const document = await get(ana, `/v1/knowledge/documents/${applied.body.document_id}`);
    expect(document.status).toBe(200);
    expect(document.body).toMatchObject({
      title: "Svalbard shipping",
      body: "Parcels to Svalbard travel by the Longyearbyen cargo barge.",
      provenance: { thread_id: thread, run_id: proposing.id, step_no: svalbard.step_no, proposal_id: svalbard.id },
    });

    const found = await run("search Longyearbyen cargo barge", thread);
    expect(found.state).toBe("succeeded");
    expect(found.output.evidence[0]).toMatchObject({ document_id: applied.body.document_id, title: "Svalbard shipping" });
    const never = await run("search Zanzibar dhow from Dar", thread);
    expect(never.output.evidence).toEqual([]);
    expect((await pool.query("SELECT count(*)::int AS n FROM kb_documents WHERE proposal_id = $1", [zanzibar.id])).rows[0].n).toBe(0);

    // Decided once: applying or dismissing again is 409, and changes nothing.
    for (const action of ["apply", "dismiss"]) {
      for (const p of [svalbard, zanzibar]) {
        expect((await post(ana, `/v1/knowledge/proposals/${p.id}/${action}`)).body).toMatchObject({ status: 409, code: 10090 });
      }
    }
    expect((await pool.query("SELECT count(*)::int AS n FROM kb_documents WHERE proposal_id = $1", [svalbard.id])).rows[0].n).toBe(1);
  });

  it("another member neither sees nor decides a proposal (404, as a missing one); an admin lists the tenant's and decides it", async () => {
    const done = await propose([
      fact("Cargo cut-off", "Cargo for the Monday ferry must arrive by Friday noon."),
      fact("Pallet size", "Pallets may be at most 120 by 80 centimetres."),
    ]);
    const [pallet, cutoff] = (await listOwn("status=pending")).filter((p) => p.run_id === done.id);
    expect([cutoff.title, pallet.title]).toEqual(["Cargo cut-off", "Pallet size"]);

    expect((await listOwn("")).map((p) => p.id)).toEqual(expect.arrayContaining([cutoff.id, pallet.id]));
    expect((await listOwn("", bob)).map((p) => p.id)).not.toContain(cutoff.id);
    expect((await get(bob, "/v1/knowledge/proposals?scope=tenant")).body).toMatchObject({ status: 403, code: 10031 });
    for (const id of [cutoff.id, "00000000-0000-4000-8000-000000000000"]) {
      for (const action of ["apply", "dismiss"]) {
        expect((await post(bob, `/v1/knowledge/proposals/${id}/${action}`)).body).toMatchObject({ status: 404, code: 10050, detail: "proposal not found" });
      }
    }
    expect((await post(bob, "/v1/knowledge/proposals/not-a-proposal/apply")).body).toMatchObject({ status: 404, code: 10050 });
    expect((await get(ana, `/v1/knowledge/proposals?scope=tenant&status=pending`)).status).toBe(403);

    // The admin: the tenant's proposals, and a decision on ana's.
    const tenant = await get(root, "/v1/knowledge/proposals?scope=tenant&page_size=100");
    expect(tenant.status).toBe(200);
    expect(tenant.body.items.map((p: Proposal) => p.id)).toEqual(expect.arrayContaining([cutoff.id, pallet.id]));
    expect(new Set(tenant.body.items.map((p: Proposal) => p.proposed_by))).toContain("ana");
    expect((await listOwn("", root)).map((p) => p.id)).not.toContain(cutoff.id);
    const applied = await post(root, `/v1/knowledge/proposals/${cutoff.id}/apply`);
    expect(applied.body).toMatchObject({ status: "applied", decided_by: "root", proposed_by: "ana" });
    const dismissed = await post(root, `/v1/knowledge/proposals/${pallet.id}/dismiss`);
    expect(dismissed.body).toMatchObject({ status: "dismissed", decided_by: "root" });
    expect((await post(root, `/v1/knowledge/proposals/${cutoff.id}/dismiss`)).body).toMatchObject({ status: 409, code: 10090 });
    // Bob still sees none of it.
    expect((await post(bob, `/v1/knowledge/proposals/${pallet.id}/apply`)).body).toMatchObject({ status: 404, code: 10050 });
  });

  it("replays every run that proposed from its events alone: the same knowledge.proposed events, the same end", async () => {
    const proposedIn = new Set<string>();
    for (const id of proposing) if ((await eventsOf(platform, ana, id)).some((e) => e.type === "knowledge.proposed")) proposedIn.add(id);
    expect(proposedIn.size).toBeGreaterThanOrEqual(4);
    const replay = spawnSync(process.execPath, [join(__dirname, "..", "..", "services", "agent-runner", "dist", "replay.js"), ...proposing], {
      env: { ...process.env, DATABASE_URL: platform.databaseUrl },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(replay.stderr).toBe("");
    const lines = replay.stdout.trim().split("\n");
    expect(lines.slice(0, proposing.length)).toEqual(proposing.map((id) => `${id} succeeded same`));
    expect(replay.status).toBe(0);
  });

  it("refuses a malformed list query or decision body with 400", async () => {
    for (const query of ["status=maybe", "scope=all", "thread_id=nope", "page=0", "page_size=101", "other=1", "status=pending&status=applied"]) {
      expect([query, (await get(ana, `/v1/knowledge/proposals?${query}`)).body.code]).toEqual([query, 10001]);
    }
    const [any] = await listOwn("");
    expect((await post(ana, `/v1/knowledge/proposals/${any.id}/apply`, { force: true })).body).toMatchObject({ status: 400, code: 10001 });
  });
});
