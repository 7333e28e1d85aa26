import { spawnSync } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

// An approval holds for the call it was asked for, not for its id, which the model chooses. The model here reuses
// the id `n0` for a second save_note with other arguments, the step after the first was approved.
const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);
const note = (title: string, body: string): Reply => ({ toolCalls: [{ id: "n0", name: "save_note", arguments: JSON.stringify({ title, body }) }] });

function script(req: ChatRequest): Reply {
  const [, tag] = inputOf(req).split(" ");
  const turn = req.messages.filter((m) => m.role === "tool").length;
  if (turn === 0) return note(`Meeting ${tag}`, "We ship on Friday.");
  if (turn === 1) return note(`Payroll ${tag}`, "Pay everyone twice this month.");
  return { text: "done" };
}

describe("approvals are bound to the exact call, not to the id the model chose", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let member: string;

  const notes = async (title: string) =>
    (await pool.query("SELECT count(*)::int AS n FROM kb_documents WHERE tenant_id = 'acme' AND title = $1", [title])).rows[0].n as number;
  const confirmations = async (runId: string) => (await eventsOf(platform, member, runId)).filter((e) => e.type === "confirmation_required");

  /** Waits (bounded) until the run waits for its n-th confirmation; returns that request. */
  async function nthConfirmation(runId: string, n: number) {
    return waitFor(
      async () => {
        const run = (await platform.http("GET", `/v1/agents/runs/${runId}`, { token: member })).body;
        if (run.state !== "awaiting_confirmation") return undefined;
        const asked = await confirmations(runId);
        return asked.length === n ? asked[n - 1] : undefined;
      },
      { what: `confirmation ${n} of run ${runId}` },
    );
  }

  async function start(tag: string): Promise<string> {
    const created = await platform.http("POST", "/v1/agents/runs", { token: member, body: { input: `notes ${tag}` } });
    expect(created.status).toBe(201);
    return created.body.id;
  }

  const decide = (runId: string, body: unknown) => platform.http("POST", `/v1/agents/runs/${runId}/confirmation`, { token: member, body });

  async function finished(runId: string) {
    return waitFor(
      async () => {
        const run = (await platform.http("GET", `/v1/agents/runs/${runId}`, { token: member })).body;
        return ["succeeded", "failed", "cancelled"].includes(run.state) ? run : undefined;
      },
      { what: `run ${runId} to end` },
    );
  }

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    member = await platform.token({ tenant: "acme", user: "mo" });
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("the reused id with other arguments is asked for again, does not run on the first approval, and a stale approval is refused", async () => {
    const runId = await start("a");
    const first = await nthConfirmation(runId, 1);
    expect(first.data).toMatchObject({ call_id: "n0", tool_name: "save_note", step_no: 1, fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const approved = await decide(runId, { decision: "approve", fingerprint: first.data.fingerprint });
    expect(approved.status).toBe(200);

    const second = await nthConfirmation(runId, 2);
    expect(second.data).toMatchObject({ call_id: "n0", tool_name: "save_note", step_no: 2 });
    expect(JSON.parse(second.data.arguments)).toEqual({ title: "Payroll a", body: "Pay everyone twice this month." });
    expect(second.data.fingerprint).not.toBe(first.data.fingerprint);
    expect(await notes("Meeting a")).toBe(1);
    expect(await notes("Payroll a")).toBe(0);

    // A client that approves what it showed before (the first call) is told the run waits for another call.
    const before = await eventsOf(platform, member, runId);
    const stale = await decide(runId, { decision: "approve", fingerprint: first.data.fingerprint });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe(10090);
    expect(await eventsOf(platform, member, runId)).toHaveLength(before.length);
    const malformed = await decide(runId, { decision: "approve", fingerprint: "not-a-fingerprint" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe(10001);

    const rejected = await decide(runId, { decision: "reject" });
    expect(rejected.status).toBe(200);
    const run = await finished(runId);
    expect(run.state).toBe("succeeded");
    expect(await notes("Payroll a")).toBe(0);

    const events = await eventsOf(platform, member, runId);
    expect(events.filter((e) => e.type === "confirmation.decided").map((e) => [e.data.decision, e.data.fingerprint])).toEqual([
      ["approve", first.data.fingerprint],
      ["reject", second.data.fingerprint],
    ]);
    expect(events.filter((e) => e.type === "tool_call").map((e) => e.data.step_no)).toEqual([1]);
    expect(events.filter((e) => e.type === "tool_result").map((e) => [e.data.step_no, e.data.result_code])).toEqual([
      [1, "ok"],
      [2, "REJECTED_BY_USER"],
    ]);
  });

  it("each call runs on its own approval: two approvals, two notes", async () => {
    const runId = await start("b");
    await decide(runId, { decision: "approve", fingerprint: (await nthConfirmation(runId, 1)).data.fingerprint });
    const second = await nthConfirmation(runId, 2);
    expect(await notes("Payroll b")).toBe(0);
    expect((await decide(runId, { decision: "approve", fingerprint: second.data.fingerprint })).status).toBe(200);
    expect((await finished(runId)).state).toBe("succeeded");
    expect(await notes("Meeting b")).toBe(1);
    expect(await notes("Payroll b")).toBe(1);
    const events = await eventsOf(platform, member, runId);
    expect(events.filter((e) => e.type === "tool_call").map((e) => e.data.step_no)).toEqual([1, 2]);
  });

  it("the runs recorded with bound approvals replay to the same final state", () => {
    const dist = join(__dirname, "..", "..", "services", "agent-runner", "dist");
    const result = spawnSync(process.execPath, [join(dist, "replay.js"), "--all-finished"], {
      env: { ...process.env, DATABASE_URL: platform.databaseUrl },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim().split("\n").at(-1)).toBe("2 runs replayed: 2 same, 0 diverged, 0 unfinished, 0 missing");
    expect(result.status).toBe(0);
  });
});
