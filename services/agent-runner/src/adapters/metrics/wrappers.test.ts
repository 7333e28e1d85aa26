import { breakerGauge, createMetrics, sampleValue } from "@steward/platform";
import type { InvokeResponse, ToolExecApi } from "@steward/proto";
import { ModelCallAbortedError, ModelUnavailableError, type ModelProvider, type ModelRequest } from "../../domain/model";
import type { Delivery } from "../../app/handle-run-requested";
import { withBreaker } from "../llm/guarded-provider";
import { countRedeliveries } from "./delivery-metrics";
import { atMostEvery } from "./throttle";
import { timedProvider } from "./timed-provider";
import { timedToolExec } from "./timed-tool-exec";

const request: ModelRequest = { messages: [], tools: [], maxOutputTokens: 10, signal: new AbortController().signal };
const answer = { text: "hi", toolCalls: [], finishReason: "stop" as const, usage: { input_tokens: 1, output_tokens: 1 }, provider: "scripted" };

function scriptedProvider(outcomes: Array<"ok" | "down" | "aborted">): ModelProvider {
  return {
    name: "scripted",
    async complete() {
      const o = outcomes.shift();
      if (o === "down") throw new ModelUnavailableError("scripted");
      if (o === "aborted") throw new ModelCallAbortedError();
      return answer;
    },
  };
}

describe("runner wrappers", () => {
  it("times model calls by profile and outcome", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    const provider = timedProvider(scriptedProvider(["ok", "down", "aborted"]), metrics);
    await provider.complete(request);
    await expect(provider.complete(request)).rejects.toBeInstanceOf(ModelUnavailableError);
    await expect(provider.complete(request)).rejects.toBeInstanceOf(ModelCallAbortedError);
    const text = await metrics.text();
    for (const outcome of ["ok", "unavailable", "aborted"]) {
      expect(sampleValue(text, "steward_model_call_duration_seconds_count", { profile: "scripted", outcome })).toBe(1);
    }
  });

  it("times tool calls by tool and result code; a name tool-exec did not list is other", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    const results: Array<string | Error> = ["ok", "60302", new Error("UNAVAILABLE"), "ok"];
    const api: ToolExecApi = {
      listTools: async () => ({ tools: [] }),
      invoke: async () => {
        const r = results.shift()!;
        if (r instanceof Error) throw r;
        return { resultCode: r } as InvokeResponse;
      },
      state: () => "ready",
      close: () => undefined,
    };
    const known = new Set<string>();
    const timed = timedToolExec(api, metrics, known);
    known.add("knowledge_search"); // learnt after the wrapper was made, as main.ts does
    const req = (toolName: string) => ({ runId: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", tenantId: "acme", userId: "alice", toolName }) as never;
    await timed.invoke(req("knowledge_search"));
    await timed.invoke(req("knowledge_search"));
    await expect(timed.invoke(req("knowledge_search"))).rejects.toThrow("UNAVAILABLE");
    await timed.invoke(req("rm_rf_everything"));
    const text = await metrics.text();
    expect(sampleValue(text, "steward_runner_tool_call_duration_seconds_count", { tool: "knowledge_search", result: "ok" })).toBe(1);
    expect(sampleValue(text, "steward_runner_tool_call_duration_seconds_count", { tool: "knowledge_search", result: "60302" })).toBe(1);
    expect(sampleValue(text, "steward_runner_tool_call_duration_seconds_count", { tool: "knowledge_search", result: "error" })).toBe(1);
    expect(sampleValue(text, "steward_runner_tool_call_duration_seconds_count", { tool: "other", result: "ok" })).toBe(1);
    expect(text).not.toContain("rm_rf");
  });

  it("does not count a held call the runner dropped (it was not made), but counts one let go on", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    const api: ToolExecApi = {
      listTools: async () => ({ tools: [] }),
      invoke: async (_req, options) => {
        if (options?.go && !(await options.go)) throw new Error("CANCELLED");
        return { resultCode: "ok" } as InvokeResponse;
      },
      state: () => "ready",
      close: () => undefined,
    };
    const timed = timedToolExec(api, metrics, new Set(["knowledge_search"]));
    const req = { runId: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", tenantId: "acme", userId: "alice", toolName: "knowledge_search" } as never;
    await expect(timed.invoke(req, { go: Promise.resolve(false) })).rejects.toThrow("CANCELLED");
    await timed.invoke(req, { go: Promise.resolve(true) });
    const text = await metrics.text();
    expect(sampleValue(text, "steward_runner_tool_call_duration_seconds_count", { tool: "knowledge_search", result: "error" })).toBeUndefined();
    expect(sampleValue(text, "steward_runner_tool_call_duration_seconds_count", { tool: "knowledge_search", result: "ok" })).toBe(1);
  });

  it("counts redeliveries from the delivery count and hands every delivery on", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    const seen: number[] = [];
    const handle = countRedeliveries(async (d: Delivery) => void seen.push(d.deliveryCount), metrics);
    for (const deliveryCount of [1, 2, 3]) await handle({ deliveryCount } as Delivery);
    expect(seen).toEqual([1, 2, 3]);
    expect(sampleValue(await metrics.text(), "steward_runner_redeliveries_total")).toBe(2);
  });

  it("shows a model breaker opening on the breaker gauge", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    const report = breakerGauge(metrics);
    const guarded = withBreaker(scriptedProvider(["down", "down", "down"]), {
      volumeThreshold: 2,
      onState: (state) => report("llm-primary", state),
    });
    const open = () => metrics.text().then((t) => sampleValue(t, "steward_breaker_state", { breaker: "llm-primary", state: "open" }));
    expect(await open()).toBe(0);
    for (let i = 0; i < 3; i++) await guarded.complete(request).catch(() => undefined);
    expect(await open()).toBe(1);
  });

  it("runs throttled work at most once per interval", async () => {
    let t = 0;
    let runs = 0;
    const read = atMostEvery(
      5000,
      async () => ++runs,
      () => t,
    );
    expect(await read()).toBe(1);
    t = 4999;
    expect(await read()).toBe(1);
    t = 5000;
    expect(await read()).toBe(2);
  });

  it("shares a run still in flight even when the interval has passed", async () => {
    let t = 0;
    let runs = 0;
    let finish: () => void = () => undefined;
    const read = atMostEvery(
      0,
      () => new Promise<number>((resolve) => (finish = () => resolve(++runs))),
      () => t,
    );
    const first = read();
    t = 10;
    const second = read();
    finish();
    expect(await first).toBe(1);
    expect(await second).toBe(1);
    t = 20;
    const third = read();
    finish();
    expect(await third).toBe(2);
  });
});
