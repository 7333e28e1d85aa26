import pg from "pg";
import { addDocument } from "@steward/store";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf, publishedRows, runToEnd } from "../support/runs";
import { openEventStream } from "../support/sse";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);
const toolMessages = (req: ChatRequest) => req.messages.filter((m) => m.role === "tool").map((m) => JSON.parse(String(m.content)));
const call = (id: string, name: string, args: unknown): Reply => ({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });

describe("the ReAct runtime: streaming, modes, questions, approvals, cancel, fallback", () => {
  let platform: TestPlatform;
  let primary: FakeOpenAi;
  let fallback: FakeOpenAi;
  let pool: pg.Pool;
  let token: string;
  const release = new Map<string, () => void>();
  const held = (key: string) => new Promise<void>((resolve) => release.set(key, resolve));

  function script(req: ChatRequest): Reply | Promise<Reply> {
    const input = inputOf(req);
    const results = toolMessages(req);
    const turn = results.length;
    const scenario = input.split(/[ -]/)[0];
    switch (scenario) {
      case "sse":
        if (turn === 0) return call("s0", "knowledge_search", { query: "refund" });
        if (turn === 1) return held("sse").then(() => call("s1", "test_counter", { key: "after-hold" }));
        return { text: "streamed" };
      case "askmode":
        return turn === 0 ? call("w0", "test_write", { key: "nope" }) : { text: `refused: ${results[0].result_code}` };
      case "explore": {
        const last = results[results.length - 1];
        if (last?.result?.answer === "Continue exploring") return call(`e${turn}`, "test_explore", { note: "after reset" });
        if (last?.result?.answer === "Stop for now" || last?.result?.explored === "after reset") return { text: `explored ${turn}` };
        if (turn < 8) return call(`e${turn}`, "test_explore", { note: `look ${turn}` });
        if (turn === 8) return call(`e${turn}`, "test_explore", { note: "one more" });
        return call(`e${turn}`, "ask_user", { question: "[[EXPLORATION_BUDGET]] I have looked a lot. Go on?" });
      }
      case "ask":
        return turn === 0 ? call("q0", "ask_user", { question: "Which region?", options: ["EU", "US"] }) : { text: `region is ${results[0].result.answer}` };
      case "confirm":
        return turn === 0 ? call("c0", "test_write", { key: input }) : { text: `write ${results[0].result_code}` };
      case "slow":
        return held(input).then(() => ({ text: "too late" }));
      case "toolcancel":
        return turn === 0 ? call("t0", "test_counter", { key: input, delay_ms: 3000 }) : { text: "should not be asked" };
      case "focus":
        if (turn === 0) return call("f0", "test_focus", {});
        if (turn === 1) return call("f1", "test_focused_only", {});
        return { text: "focused work done" };
      case "fallback":
        return { status: 503 };
      default:
        return { text: "ok" };
    }
  }

  beforeAll(async () => {
    primary = await startFakeOpenAi(script);
    fallback = await startFakeOpenAi(() => ({ text: "answered by the fallback" }));
    platform = await startTestPlatform({
      LLM_BASE_URL: primary.baseUrl,
      LLM_API_KEY: "sk-primary",
      LLM_MODEL: "fake",
      LLM_FALLBACK_BASE_URL: fallback.baseUrl,
      LLM_FALLBACK_API_KEY: "sk-fallback",
      RUNNER_LEASE_MS: "1500",
      RUNNER_ACK_WAIT_MS: "1500",
      RUNNER_RETRY_BACKOFF_MS: "100",
      RUNNER_REAPER_INTERVAL_MS: "200",
      STEWARD_TEST_ASK_WAIT_SECONDS: "2",
    });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    await addDocument(pool, { tenantId: "acme", title: "Refund policy", body: "Refunds within 30 days." });
    token = await platform.token({ tenant: "acme", user: "rita" });
  });

  afterAll(async () => {
    for (const open of release.values()) open();
    await pool?.end();
    await platform?.teardown();
    await primary?.close();
    await fallback?.close();
  });

  const post = (body: Record<string, unknown>) => platform.http("POST", "/v1/agents/runs", { token, body });
  const stateOf = async (id: string) => (await platform.http("GET", `/v1/agents/runs/${id}`, { token })).body;
  const waitState = (id: string, states: string[]) =>
    waitFor(
      async () => {
        const r = await stateOf(id);
        return states.includes(r.state) ? r : undefined;
      },
      { what: `run ${id} to reach ${states.join("/")}` },
    );

  it("streams every stored event in order; a client resuming with Last-Event-ID gets the rest exactly once, across a runner kill", async () => {
    const created = await post({ input: "sse please" });
    const url = `${platform.gatewayUrl}/v1/agents/runs/${created.body.id}/events`;
    const first = await openEventStream(url, token);
    await first.until((m) => m.some((e) => e.event === "tool_result"));
    const k = Number(first.messages.filter((m) => m.id).at(-1)!.id);
    first.close();
    // The runner is killed while the model's second answer is pending; another one finishes the run.
    await waitFor(() => (release.has("sse") ? true : undefined));
    release.delete("sse");
    platform.services.runner.child.kill("SIGKILL");
    await platform.startRunner({ RUNNER_LEASE_MS: "1500", RUNNER_ACK_WAIT_MS: "1500" });
    await waitFor(() => (release.has("sse") ? true : undefined), { what: "the new runner to ask the model again" });
    release.get("sse")!();
    const resumed = await openEventStream(url, token, String(k));
    await resumed.ended;
    const seqs = resumed.messages.filter((m) => m.id).map((m) => Number(m.id));
    const stored = await eventsOf(platform, token, created.body.id);
    expect(seqs).toEqual(stored.filter((e) => e.seq > k).map((e) => e.seq));
    expect(resumed.messages.at(-1)?.event).toBe("run.succeeded");
    const full = await openEventStream(url, token);
    await full.ended;
    expect(full.messages.filter((m) => m.id).map((m) => m.event)).toEqual(stored.map((e) => e.type));
    expect(JSON.parse(full.messages[0].data)).toMatchObject({ seq: 1, type: "run.queued" });
  });

  it("ask mode hides write tools from the model and refuses one called anyway; nothing runs", async () => {
    const created = await post({ input: "askmode try", mode: "ask" });
    const run = await waitState(created.body.id, ["succeeded", "failed"]);
    expect(run.output.text).toBe("refused: ASK_MODE_DENIED");
    const request = primary.requests.find((r) => inputOf(r) === "askmode try")!;
    expect(request.tools?.map((t) => t.function.name)).not.toContain("test_write");
    expect(request.tools?.map((t) => t.function.name)).toContain("knowledge_search");
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM test_side_effects WHERE run_id = $1", [run.id]);
    expect(rows[0].n).toBe(0);
  });

  it("a state-changing tool changes the next iteration's tool set", async () => {
    const run = await runToEnd(platform, token, "focus now");
    expect(run.state).toBe("succeeded");
    const requests = primary.requests.filter((r) => inputOf(r) === "focus now");
    expect(requests[0].tools?.map((t) => t.function.name)).not.toContain("test_focused_only");
    expect(requests[1].tools?.map((t) => t.function.name)).toContain("test_focused_only");
  });

  it.each([
    ["Continue exploring", "explore and continue"],
    ["Stop for now", "explore and stop"],
  ])("the exploration budget: past 7 the call is skipped, the model must ask, and %p is honoured", async (answer, input) => {
    const created = await post({ input });
    const waiting = await waitState(created.body.id, ["awaiting_input", "failed", "succeeded"]);
    expect(waiting.state).toBe("awaiting_input");
    const events = await eventsOf(platform, token, created.body.id);
    const codes = events.filter((e) => e.type === "tool_result").map((e) => e.data.result_code);
    expect(codes).toEqual([...Array(7).fill("ok"), "EXPLORATION_BUDGET_REACHED", "EXPLORATION_BUDGET_REACHED"]);
    const asked = events.find((e) => e.type === "ask_user");
    expect(asked?.data.options).toEqual(["Continue exploring", "Stop for now"]);
    const answered = await platform.http("POST", `/v1/agents/runs/${created.body.id}/input`, { token, body: { answer } });
    expect(answered.status).toBe(200);
    const done = await waitState(created.body.id, ["succeeded", "failed"]);
    expect(done.state).toBe("succeeded");
    const after = (await eventsOf(platform, token, created.body.id)).filter((e) => e.type === "tool_result").map((e) => e.data.result_code);
    expect(after.slice(9)).toEqual(answer === "Continue exploring" ? ["ok", "ok"] : ["ok"]);
  });

  it("ask_user pauses the run with no runner holding it; the answer resumes it", async () => {
    const created = await post({ input: "ask me" });
    const waiting = await waitState(created.body.id, ["awaiting_input"]);
    const { rows } = await pool.query("SELECT lease_owner FROM runs WHERE id = $1", [waiting.id]);
    expect(rows[0].lease_owner).toBeNull();
    const wrongState = await platform.http("POST", `/v1/agents/runs/${waiting.id}/confirmation`, { token, body: { decision: "approve" } });
    expect(wrongState.status).toBe(409);
    expect(wrongState.body.code).toBe(10090);
    const other = await platform.token({ tenant: "acme", user: "otto" });
    expect((await platform.http("POST", `/v1/agents/runs/${waiting.id}/input`, { token: other, body: { answer: "EU" } })).status).toBe(404);
    // The runner's rows are all out before the answer (its marks trail its commits by up to 50 ms), so the
    // gateway may publish the answer itself.
    const published = async () => publishedRows(pool, await platform.nats(), platform.namespace, waiting.id);
    await published();
    await platform.http("POST", `/v1/agents/runs/${waiting.id}/input`, { token, body: { answer: "EU" } });
    const done = await waitState(waiting.id, ["succeeded", "failed"]);
    expect(done.output.text).toBe("region is EU");
    // The answer's copy and the command handing the run back went out from the gateway right after its commit, and
    // the resumed runner's rows from the runner: held rows published within their 2 s grace, never by a relay.
    const onBus = await published();
    const answered = onBus.findIndex((r) => r.type === "input.received");
    expect(onBus.slice(answered, answered + 2).map((r) => r.type)).toEqual(["input.received", "command"]);
    expect(onBus.filter((r) => !r.byWriter)).toEqual([]);
  });

  it("an unanswered question fails the run with 60406 after the wait", async () => {
    const created = await post({ input: "ask nobody" });
    await waitState(created.body.id, ["awaiting_input"]);
    const failed = await waitState(created.body.id, ["failed"]);
    expect(failed.error).toMatchObject({ code: 60406 });
  });

  it.each([
    ["approve", "write ok", 1],
    ["reject", "write REJECTED_BY_USER", 0],
  ])("a tool that requires confirmation waits with the exact call shown; %s", async (decision, text, runs) => {
    const created = await post({ input: `confirm-${decision}` });
    const waiting = await waitState(created.body.id, ["awaiting_confirmation"]);
    const shown = (await eventsOf(platform, token, waiting.id)).find((e) => e.type === "confirmation_required");
    expect(shown?.data).toMatchObject({ tool_name: "test_write", arguments: JSON.stringify({ key: `confirm-${decision}` }) });
    await platform.http("POST", `/v1/agents/runs/${waiting.id}/confirmation`, { token, body: { decision } });
    const done = await waitState(waiting.id, ["succeeded", "failed"]);
    expect(done.output.text).toBe(text);
    const { rows } = await pool.query("SELECT coalesce(sum(count), 0)::int AS n FROM test_side_effects WHERE run_id = $1", [waiting.id]);
    expect(rows[0].n).toBe(runs);
  });

  it("cancel during a long model call ends the run cancelled/60405 within one step; cancelling again is 409", async () => {
    const created = await post({ input: "slow cancel-me" });
    await waitFor(() => (release.has("slow cancel-me") ? true : undefined));
    const cancelled = await platform.http("POST", `/v1/agents/runs/${created.body.id}/cancel`, { token });
    expect(cancelled.status).toBe(200);
    const run = await waitState(created.body.id, ["cancelled"]);
    expect(run.error).toEqual({ code: 60405, message: expect.any(String) });
    expect(run.usage.model_calls).toBe(0);
    const again = await platform.http("POST", `/v1/agents/runs/${created.body.id}/cancel`, { token });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe(10090);
  });

  it("cancel while a tool call runs: the call's result is recorded before run.cancelled, and the tool ran once", async () => {
    const created = await post({ input: "toolcancel now" });
    const id = created.body.id as string;
    await waitFor(async () => ((await eventsOf(platform, token, id)).some((e) => e.type === "tool_call") ? true : undefined), {
      what: "the call to be sent",
    });
    expect((await platform.http("POST", `/v1/agents/runs/${id}/cancel`, { token })).status).toBe(200);
    const run = await waitState(id, ["cancelled"]);
    expect(run.error).toMatchObject({ code: 60405 });
    const events = await eventsOf(platform, token, id);
    const seqOf = (type: string) => events.find((e) => e.type === type)?.seq ?? -1;
    // The cancel arrived while the tool ran (its 3 s delay), and its effect is on the record before the run ended.
    expect(seqOf("run.cancel_requested")).toBeLessThan(seqOf("tool_result"));
    expect(seqOf("tool_result")).toBeLessThan(seqOf("run.cancelled"));
    expect(events.find((e) => e.type === "tool_result")?.data).toMatchObject({ call_id: "t0", result_code: "ok", result: { count: 1 } });
    const { rows } = await pool.query("SELECT count FROM test_side_effects WHERE run_id = $1", [id]);
    expect(rows).toEqual([{ count: 1 }]);
    expect(run.usage.model_calls).toBe(1);
  });

  it("when the primary profile fails, the fallback answers and the event stream marks it", async () => {
    const run = await runToEnd(platform, token, "fallback now");
    expect(run.output.text).toBe("answered by the fallback");
    const events = await eventsOf(platform, token, run.id);
    expect(events.find((e) => e.type === "provider.fallback")?.data).toEqual({ step_no: 1, from: "primary", to: "fallback" });
    expect(events.find((e) => e.type === "message")?.data.provider).toBe("fallback");
  });
});
