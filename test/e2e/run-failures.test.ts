import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf, runToEnd } from "../support/runs";

jest.setTimeout(180_000);

/** The scenario a run plays is named in its input: "scenario:<name>". */
function scenarioOf(req: ChatRequest): string {
  const user = req.messages.find((m) => m.role === "user");
  return /scenario:(\w+)/.exec(String(user?.content))?.[1] ?? "";
}

const toolTurns = (req: ChatRequest) => req.messages.filter((m) => m.role === "tool").length;
const call = (name: string, args: unknown, id: string): Reply => ({
  toolCalls: [{ id, name, arguments: typeof args === "string" ? args : JSON.stringify(args) }],
});

function script(req: ChatRequest): Reply {
  const turn = toolTurns(req);
  switch (scenarioOf(req)) {
    case "cycle":
      return call("knowledge_search", { query: "same thing" }, `c${turn}`);
    case "budget":
      return call("knowledge_search", { query: `question ${turn}` }, `c${turn}`);
    case "truncated":
      return { text: "", finish: "length" };
    case "garbage":
      return call("knowledge_search", "{query: not json", "c0");
    case "unknown":
      return call("delete_everything", {}, "c0");
    case "guarded":
      return call("test_guarded", {}, "c0");
    case "notext":
      return { text: "   " };
    case "flaky":
      return turn < 4 ? call("test_fail", { note: `attempt ${turn}` }, `c${turn}`) : { text: "done despite a broken tool" };
    default:
      return { text: "ok" };
  }
}

describe("every failure row of the run contract, through the real provider path", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let token: string;

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake" });
    token = await platform.token({ tenant: "acme", user: "tess" });
  });

  afterAll(async () => {
    await platform?.teardown();
    await model?.close();
  });

  it("60400: a cycle of identical tool calls, with tool_name, cycle_length and step_no", async () => {
    const run = await runToEnd(platform, token, "scenario:cycle");
    expect(run.state).toBe("failed");
    expect(run.error).toEqual({ code: 60400, message: expect.any(String), tool_name: "knowledge_search", cycle_length: 1, step_no: 3 });
    expect(run.output).toBeNull();
  });

  it("60401: the step budget of 25 model calls is spent", async () => {
    const run = await runToEnd(platform, token, "scenario:budget");
    expect(run.state).toBe("failed");
    expect(run.error).toMatchObject({ code: 60401, step_no: 25 });
    expect(run.usage.model_calls).toBe(25);
  });

  it("60301: the output was truncated with no usable text", async () => {
    const run = await runToEnd(platform, token, "scenario:truncated");
    expect(run.error).toMatchObject({ code: 60301, step_no: 1 });
  });

  it("60302: garbage tool arguments", async () => {
    const run = await runToEnd(platform, token, "scenario:garbage");
    expect(run.error).toMatchObject({ code: 60302, tool_name: "knowledge_search", step_no: 1 });
  });

  it("60302: no final text is never an empty success", async () => {
    const run = await runToEnd(platform, token, "scenario:notext");
    expect(run.state).toBe("failed");
    expect(run.error).toMatchObject({ code: 60302 });
  });

  it("60200: the model called a tool that is not registered", async () => {
    const run = await runToEnd(platform, token, "scenario:unknown");
    expect(run.error).toMatchObject({ code: 60200, tool_name: "delete_everything", step_no: 1 });
  });

  it("a denied AbortOnDeny tool ends the run with the PDP's deny code, and the tool never ran", async () => {
    const run = await runToEnd(platform, token, "scenario:guarded");
    expect(run.error).toMatchObject({ code: 60500, tool_name: "test_guarded", step_no: 1 });
    const events = await eventsOf(platform, token, run.id);
    const result = events.find((e) => e.type === "tool_result");
    expect(result?.data).toMatchObject({ result_code: "60500", decision: { permit: false } });
  });

  it("errors expose only code, message and the documented fields", async () => {
    const list = await platform.http("GET", "/v1/agents/runs?page_size=100", { token });
    const allowed = new Set(["code", "message", "tool_name", "step_no", "cycle_length"]);
    const errors = list.body.items.filter((r: { error: unknown }) => r.error);
    expect(errors.length).toBeGreaterThanOrEqual(6);
    for (const run of errors) expect(Object.keys(run.error).every((k) => allowed.has(k))).toBe(true);
  });

  it("a failing tool gives the model a controlled result; the third failure opens its circuit and the fourth call answers 60403 without running", async () => {
    const before = model.requests.length;
    const run = await runToEnd(platform, token, "scenario:flaky");
    expect(run.state).toBe("succeeded");
    expect(run.output.text).toBe("done despite a broken tool");
    const events = await eventsOf(platform, token, run.id);
    const results = events.filter((e) => e.type === "tool_result").map((e) => e.data.result_code);
    expect(results).toEqual(["60302", "60302", "60302", "60403"]);
    const circuit = events.find((e) => e.type === "circuit.opened");
    expect(circuit?.data).toMatchObject({ tool_name: "test_fail", failures: 3 });
    expect(events.findIndex((e) => e.type === "circuit.opened")).toBeLessThan(events.findLastIndex((e) => e.type === "tool_result"));
    const seen = JSON.stringify(model.requests.slice(before)) + JSON.stringify(events);
    expect(seen).toContain("tool failed");
    expect(seen).not.toContain("hunter2");
    expect(seen).not.toContain("10.0.0.7");
  });
});
