import pg from "pg";
import { addDocument } from "@steward/store";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { eventsOf, runToEnd } from "../support/runs";
import { openEventStream } from "../support/sse";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

const inputOf = (req: ChatRequest) => String(req.messages.find((m) => m.role === "user")?.content);
const tokensOf = (req: ChatRequest) => Math.ceil(JSON.stringify(req.messages).length / 4);

describe("the model's stream and window: deltas, cancel mid-stream, continuation, compaction", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let token: string;
  let releaseStream: (() => void) | null = null;
  let openDeltas!: () => void;
  const deltasMayStart = new Promise<void>((resolve) => (openDeltas = resolve));

  function script(req: ChatRequest): Reply | Promise<Reply> {
    const input = inputOf(req);
    const tools = req.messages.filter((m) => m.role === "tool").length;
    const continued = req.messages.filter((m) => m.role === "user").length - 1;
    if (input.startsWith("deltas")) return deltasMayStart.then(() => ({ text: "one two three four five six" }));
    if (input.startsWith("stall")) {
      return { text: "this answer stalls after its first words", holdAfterFirstChunk: new Promise((resolve) => (releaseStream = resolve)) };
    }
    if (input.startsWith("long")) {
      if (continued === 0) return { text: "Part one, ", finish: "length" };
      if (continued === 1) return { text: "part two, ", finish: "length" };
      return { text: "and the end." };
    }
    if (input.startsWith("big")) {
      return tools < 6
        ? { toolCalls: [{ id: `k${tools}`, name: "knowledge_search", arguments: JSON.stringify({ query: `manual section ${tools}` }) }] }
        : { text: "read it all" };
    }
    return { text: "ok" };
  }

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake", LLM_CONTEXT_TOKENS: "2500" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    const filler = (n: number) =>
      Array.from({ length: 25 }, (_, i) => `The manual section ${n} paragraph ${i} explains the machine in great detail.`).join(" ");
    for (let n = 0; n < 6; n++) await addDocument(pool, { tenantId: "acme", title: `Manual ${n}`, body: filler(n) });
    token = await platform.token({ tenant: "acme", user: "zed" });
  });

  afterAll(async () => {
    releaseStream?.();
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("streams the answer's token deltas live, without ids, before the stored message", async () => {
    const created = await platform.http("POST", "/v1/agents/runs", { token, body: { input: "deltas please" } });
    const stream = await openEventStream(`${platform.gatewayUrl}/v1/agents/runs/${created.body.id}/events`, token);
    openDeltas(); // the stream is open (subscribed before it answered): every delta from now on reaches it
    await stream.ended;
    const deltas = stream.messages.filter((m) => m.event === "message.delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.id === undefined)).toBe(true);
    expect(deltas.map((d) => JSON.parse(d.data).delta).join("")).toBe("one two three four five six");
    const order = stream.messages.map((m) => m.event);
    expect(order.lastIndexOf("message.delta")).toBeLessThan(order.indexOf("message"));
  });

  it("cancel during a model stream aborts it and ends the run cancelled/60405", async () => {
    const created = await platform.http("POST", "/v1/agents/runs", { token, body: { input: "stall forever" } });
    const stream = await openEventStream(`${platform.gatewayUrl}/v1/agents/runs/${created.body.id}/events`, token);
    // The model has started answering and holds its stream open after the first words (deltas are live
    // only, so the first one may have passed before this client subscribed: wait on the model instead).
    await waitFor(() => (releaseStream ? true : undefined), { what: "the model to start streaming" });
    await platform.http("POST", `/v1/agents/runs/${created.body.id}/cancel`, { token });
    await stream.ended;
    expect(stream.messages.at(-1)?.event).toBe("run.cancelled");
    const run = (await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token })).body;
    expect(run).toMatchObject({ state: "cancelled", error: { code: 60405 }, output: null });
  });

  it("a length stop with text is continued (at most twice) and the parts make the answer", async () => {
    const run = await runToEnd(platform, token, "long story");
    expect(run.state).toBe("succeeded");
    expect(run.output.text).toBe("Part one, part two, and the end.");
    const events = await eventsOf(platform, token, run.id);
    expect(events.filter((e) => e.type === "message.truncated").map((e) => e.data.continuation)).toEqual([1, 2]);
    const last = model.requests.filter((r) => inputOf(r) === "long story").at(-1)!;
    expect(last.messages.filter((m) => m.role === "user").at(-1)?.content).toMatch(/^Continue exactly where you stopped/);
  });

  it("compacts older tool results before the window is exceeded, records it, and the run goes on", async () => {
    const run = await runToEnd(platform, token, "big reading");
    expect(run.state).toBe("succeeded");
    expect(run.usage.tool_calls).toBe(6);
    const events = await eventsOf(platform, token, run.id);
    const compactions = events.filter((e) => e.type === "context.compacted");
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions[0].data.tokens_after).toBeLessThan(compactions[0].data.tokens_before);
    const requests = model.requests.filter((r) => inputOf(r) === "big reading");
    expect(Math.max(...requests.map(tokensOf))).toBeLessThan(2500);
    const lastRequest = requests.at(-1)!;
    expect(lastRequest.messages.some((m) => m.role === "tool" && String(m.content).includes('"compacted":true'))).toBe(true);
  });
});
