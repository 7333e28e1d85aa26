import { startTracing, type TracingOptions } from "@steward/platform";
import type { ToolExecApi } from "@steward/proto";
import type { ModelProvider } from "../../domain/model";
import { tracedProvider } from "./traced-provider";
import { tracedToolExec } from "./traced-tool-exec";

type Exporter = NonNullable<TracingOptions["exporter"]>;
type Exported = Parameters<Exporter["export"]>[0][number];

const received = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const prompt = "please refund order 4411 for jane@example.com";
const answerText = "Your refund for order 4411 is on its way";

const provider: ModelProvider = {
  name: "primary>fallback",
  primary: "primary",
  complete: async () => ({
    text: answerText,
    toolCalls: [],
    finishReason: "stop",
    usage: { input_tokens: 120, output_tokens: 9 },
    provider: "fallback",
  }),
};

function toolExec(seen: Array<string | undefined>): ToolExecApi {
  return {
    listTools: async () => ({ tools: [] }),
    invoke: async (_req, options) => {
      seen.push(options?.traceparent);
      return {
        fingerprint: "f",
        decision: { permit: true, code: "", reasons: [], policyIds: [] },
        resultCode: "ok",
        resultJson: '{"result":"secret result"}',
        replayed: false,
        nextState: "",
        decisionMs: 0,
        toolMs: 0,
      };
    },
    state: () => "READY" as never,
    close: () => undefined,
  };
}

const request = { messages: [{ role: "user" as const, content: prompt }], tools: [], maxOutputTokens: 512, signal: new AbortController().signal };
const call = {
  runId: "r1",
  tenantId: "acme",
  userId: "user-77a",
  stepNo: 2,
  callId: "call_2_1",
  toolName: "knowledge_search",
  argumentsJson: '{"query":"refund 4411"}',
  elevationSessionId: "",
};

describe("the runner's spans", () => {
  it("off: calls pass straight through, the received traceparent handed on unchanged", async () => {
    const seen: Array<string | undefined> = [];
    await tracedToolExec(toolExec(seen), new Set(["knowledge_search"])).invoke(call, { traceparent: received });
    expect(seen).toEqual([received]);
    expect((await tracedProvider(provider, {}).complete(request)).text).toBe(answerText);
  });

  it("on: a GenAI chat span and a tool-call span whose traceparent tool-exec receives; names and numbers only", async () => {
    const spans: Exported[] = [];
    const exporter: Exporter = { export: (batch, done) => (spans.push(...batch), done({ code: 0 })), shutdown: async () => undefined };
    const tracing = startTracing("agent-runner", { source: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }, exporter });
    const seen: Array<string | undefined> = [];
    try {
      await tracedProvider(provider, { primary: "gpt-x", fallback: "gpt-y" }).complete(request);
      await tracedToolExec(toolExec(seen), new Set(["knowledge_search"])).invoke(call, { traceparent: received });
      await tracedToolExec(toolExec(seen), new Set(["knowledge_search"])).invoke({ ...call, toolName: "made_up_by_the_model" }, { traceparent: received });
    } finally {
      await tracing.shutdown();
    }
    const chat = spans.find((s) => s.name === "chat gpt-x")!;
    expect(chat.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.system": "openai",
      "gen_ai.request.model": "gpt-x",
      "gen_ai.request.max_tokens": 512,
      "gen_ai.response.model": "gpt-y",
      "gen_ai.response.finish_reasons": ["stop"],
      "gen_ai.usage.input_tokens": 120,
      "gen_ai.usage.output_tokens": 9,
      "steward.model.profile": "fallback",
    });
    const tool = spans.find((s) => s.name === "execute_tool knowledge_search")!;
    expect(tool.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
    expect(tool.attributes).toMatchObject({ "gen_ai.tool.name": "knowledge_search", "steward.tool.result_code": "ok", "steward.step_no": 2 });
    // tool-exec was called with the tool-call span's own traceparent.
    expect(seen[0]).toBe(`00-${tool.spanContext().traceId}-${tool.spanContext().spanId}-01`);
    expect(spans.some((s) => s.name === "execute_tool other")).toBe(true);
    const everything = JSON.stringify(spans.map((s) => [s.name, s.attributes]));
    for (const text of [prompt, answerText, "refund 4411", "secret result", "made_up_by_the_model", "acme", "user-77a"]) expect(everything).not.toContain(text);
  });
});
