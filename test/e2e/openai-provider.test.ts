import pg from "pg";
import { addDocument } from "@steward/store";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type FakeOpenAi } from "../support/fake-openai";
import { waitFor } from "../support/wait-for";

jest.setTimeout(120_000);

describe("a run through the real OpenAI-compatible provider path", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;

  beforeAll(async () => {
    model = await startFakeOpenAi((req) => {
      const toolMessage = req.messages.find((m) => m.role === "tool");
      if (!toolMessage) {
        return { toolCalls: [{ id: "call_a", name: "knowledge_search", arguments: JSON.stringify({ query: "on-call acknowledge page" }) }] };
      }
      const result = JSON.parse(String(toolMessage.content)) as { result: { passages: Array<{ title: string }> } };
      return { text: `Per ${result.result.passages[0]?.title ?? "nothing"}: acknowledge within 15 minutes.` };
    });
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test-secret-key", LLM_MODEL: "fake-model" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    await addDocument(pool, {
      tenantId: "globex",
      title: "On-call handbook",
      body: "The on-call engineer acknowledges a page within 15 minutes.",
    });
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("sends the tools and the tool result to the model and succeeds with its answer", async () => {
    const token = await platform.token({ tenant: "globex", user: "dana" });
    const created = await platform.http("POST", "/v1/agents/runs", {
      token,
      body: { input: "How fast must on-call acknowledge a page?", response_language: "en" },
    });
    expect(created.status).toBe(201);
    const done = await waitFor(async () => {
      const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token });
      return ["succeeded", "failed"].includes(r.body.state) ? r.body : undefined;
    });
    expect(done.state).toBe("succeeded");
    expect(done.output.text).toBe("Per On-call handbook: acknowledge within 15 minutes.");
    expect(done.output.evidence[0].title).toBe("On-call handbook");
    expect(done.usage).toEqual({ input_tokens: 101 + 102, output_tokens: 20, model_calls: 2, tool_calls: 1 });

    expect(model.requests).toHaveLength(2);
    expect(model.requests[0].model).toBe("fake-model");
    expect(model.requests[0].tools?.map((t) => t.function.name)).toContain("knowledge_search");
    // The language is the user's text and the step ledger tool output: user messages, never the system prompt.
    expect(model.requests[0].messages[0].role).toBe("system");
    expect(model.requests[0].messages[0].content).not.toContain("language");
    expect(model.requests[0].messages[1]).toEqual({ role: "user", content: "How fast must on-call acknowledge a page?" });
    expect(model.requests[0].messages[2]).toEqual({ role: "user", content: 'Write your answer in this language: "en".' });
    const second = model.requests[1].messages;
    expect(second.map((m) => m.role)).toEqual(["system", "user", "user", "user", "assistant", "tool"]);
    expect(second[3].content).toMatch(/^Run notes: [^]*- step 1 knowledge_search: ok/);
    expect(second[5].tool_call_id).toBe("call_a");
    expect(model.authorizations[0]).toBe("Bearer sk-test-secret-key");
  });

  it("keeps the API key and the prompt out of the services' info logs", () => {
    const logs = Object.values(platform.services)
      .flatMap((s) => s.lines)
      .join("\n");
    expect(logs).not.toContain("sk-test-secret-key");
    expect(logs).not.toContain("How fast must on-call acknowledge a page?");
  });
});
