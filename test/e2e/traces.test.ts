import { randomBytes } from "node:crypto";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver";
import { eventsOf, runToEnd } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

/** OTLP's span kinds (the API's plus one). */
const kind = { server: 2, client: 3, producer: 4, consumer: 5 } as const;
const services = ["gateway", "agent-runner", "tool-exec", "policy"];

/** The trace's spans once it is whole: every service in it, and every span's parent in it but the root's. */
function wholeTrace(spans: readonly ReceivedSpan[], traceId: string): ReceivedSpan[] | undefined {
  const trace = spans.filter((s) => s.traceId === traceId);
  const ids = new Set(trace.map((s) => s.spanId));
  if (!services.every((service) => trace.some((s) => s.service === service))) return undefined;
  if (trace.filter((s) => s.parentSpanId === "" || !ids.has(s.parentSpanId)).length !== 1) return undefined;
  // The drive's span ends with the run; the policy's answer to the tool's question is the deepest span.
  if (!trace.some((s) => s.service === "agent-runner" && s.kind === kind.consumer)) return undefined;
  const toolExec = new Set(trace.filter((s) => s.service === "tool-exec").map((s) => s.spanId));
  if (!trace.some((s) => s.service === "policy" && toolExec.has(s.parentSpanId))) return undefined;
  return trace;
}

function only(spans: readonly ReceivedSpan[], what: string, holds: (s: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(holds);
  if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.length}: ${found.map((s) => `${s.service} ${s.name}`).join(", ")}`);
  return found[0];
}

/**
 * With an OTLP endpoint set, one run with a tool call is one trace across the four services
 * (HTTP request, outbox publish, the runner's delivery, each model and tool call, tool-exec's call and its PDP
 * question, the PDP's decision), its spans a tree under the request's span, the model calls with the GenAI
 * attributes; and no prompt, answer, token or principal in any span. And the runner's step lines carry
 * the run, the step, the trace and the tenant.
 */
describe("traces across the four services", () => {
  let receiver: OtlpReceiver;
  let platform: TestPlatform;
  const tenant = `tt-${randomBytes(5).toString("hex")}`;
  const user = `tu-${randomBytes(5).toString("hex")}`;
  const prompt = "How long do I have to ask for a refund?";

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    platform = await startTestPlatform({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
  });
  afterAll(async () => {
    await platform?.teardown();
    await receiver?.close();
  });

  it("makes one run with a tool call one trace, a tree rooted at the HTTP request", async () => {
    const token = await platform.token({ tenant, user });
    // The scripted demo model searches the knowledge base once, then answers.
    const run = await runToEnd(platform, token, prompt);
    expect(run.state).toBe("succeeded");
    const events = await eventsOf(platform, token, run.id);
    const answer = events.find((e) => e.type === "message")!.data.text as string;
    const result = events.find((e) => e.type === "tool_result")!;
    expect(result.data.tool_name).toBe("knowledge_search");

    const post = await waitFor(
      () =>
        receiver.spans.find(
          (s) => s.service === "gateway" && s.attributes["http.route"] === "/v1/agents/runs" && s.attributes["http.request.method"] === "POST",
        ),
      { timeoutMs: 15_000, what: "the gateway's span of the POST" },
    );
    const trace = await waitFor(() => wholeTrace(receiver.spans, post.traceId), {
      timeoutMs: 20_000,
      what: `trace ${post.traceId} to reach every service, whole`,
    });
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const parentOf = (s: ReceivedSpan) => byId.get(s.parentSpanId);

    // The root: the request's server span, no parent; its status and route pattern, never the raw path.
    expect(post.parentSpanId).toBe("");
    expect(post.kind).toBe(kind.server);
    expect(post.name).toBe("POST /v1/agents/runs");
    expect(post.attributes["http.response.status_code"]).toBe(201);
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(services));

    // gateway → outbox publish → the runner's delivery.
    const consumer = only(trace, "runner delivery span", (s) => s.service === "agent-runner" && s.kind === kind.consumer);
    expect(consumer.name).toBe(`process ${platform.namespace}.agent.run.requested`);
    const publish = parentOf(consumer)!;
    expect([publish.service, publish.kind, publish.attributes["messaging.system"]]).toEqual(["gateway", kind.producer, "nats"]);
    expect(parentOf(publish)).toBe(post);

    // Each model call: a client span of the delivery, with the GenAI attributes.
    const chats = trace.filter((s) => s.attributes["gen_ai.operation.name"] === "chat");
    expect(chats.length).toBeGreaterThanOrEqual(2);
    for (const chat of chats) {
      expect(chat).toMatchObject({ service: "agent-runner", kind: kind.client, name: "chat scripted", parentSpanId: consumer.spanId });
      expect(chat.attributes).toMatchObject({
        "gen_ai.provider.name": "steward.scripted",
        "gen_ai.system": "steward.scripted",
        "gen_ai.request.model": "scripted",
        "gen_ai.response.model": "scripted",
      });
      expect(chat.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
      expect(chat.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    }

    // The tool call: runner (client) → tool-exec (server) → its PDP question (client) → the decision (server).
    const toolCall = only(trace, "runner tool-call span", (s) => s.service === "agent-runner" && s.attributes["gen_ai.operation.name"] === "execute_tool");
    expect(toolCall).toMatchObject({ kind: kind.client, name: "execute_tool knowledge_search", parentSpanId: consumer.spanId });
    expect(toolCall.attributes).toMatchObject({ "gen_ai.tool.name": "knowledge_search", "steward.tool.result_code": "ok" });
    const invoke = only(trace, "tool-exec Invoke span", (s) => s.service === "tool-exec" && s.kind === kind.server);
    expect(invoke.parentSpanId).toBe(toolCall.spanId);
    expect(invoke.attributes).toMatchObject({ "rpc.method": "Invoke", "steward.tool.result_code": "ok", "steward.policy.effect": "permit" });
    const ask = only(trace, "tool-exec PDP question", (s) => s.service === "tool-exec" && s.kind === kind.client);
    expect(ask.parentSpanId).toBe(invoke.spanId);
    const decision = only(trace, "PDP decision of the tool call", (s) => s.service === "policy" && s.parentSpanId === ask.spanId);
    expect(decision).toMatchObject({ kind: kind.server, name: "steward.v1.PolicyDecision/Decide" });
    expect(decision.attributes).toMatchObject({ "steward.policy.action": ask.attributes["steward.policy.action"], "steward.policy.effect": "permit" });
    // The route's own policy point was decided under the request's span.
    expect(trace.some((s) => s.service === "policy" && s.parentSpanId === post.spanId)).toBe(true);
    // The runner's own event copies went out under its delivery's span.
    expect(trace.some((s) => s.service === "agent-runner" && s.kind === kind.producer && s.parentSpanId === consumer.spanId)).toBe(true);

    // Nothing a user wrote or read, no credential, no principal: in no attribute of any span received.
    const evidence = JSON.stringify(result.data.result).slice(0, 40);
    const secrets = { prompt, answer: answer.slice(0, 40), evidence, token, tenant, user };
    for (const s of receiver.spans) {
      const values = JSON.stringify(s.attributes) + s.name;
      for (const [what, text] of Object.entries(secrets))
        expect({ span: s.name, what, leaks: values.includes(text) }).toEqual({ span: s.name, what, leaks: false });
    }
    expect(receiver.refused).toEqual([]);

    // One line per step with the run, the step, the trace and the tenant.
    const steps = platform.services.runner.lines
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          return undefined;
        }
      })
      .filter((l) => l && l.run_id === run.id && (l.msg === "model step" || l.msg === "tool step"));
    expect(steps.length).toBeGreaterThanOrEqual(3);
    for (const line of steps) {
      expect(line).toMatchObject({ run_id: run.id, tenant_id: tenant, trace_id: post.traceId });
      expect(typeof line!.step_no).toBe("number");
    }
  });
});
