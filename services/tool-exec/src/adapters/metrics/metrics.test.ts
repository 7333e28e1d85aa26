import { createMetrics, sampleValue } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";
import type { InvokeCommand, InvokeHandler, InvokeOutcome } from "../../app/invoke-tool";
import { withInvokeMetrics } from "./invoke-metrics";
import { withPdpMetrics } from "./pdp-metrics";

const cmd = (toolName: string): InvokeCommand => ({
  runId: "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0",
  tenantId: "tenant-acme",
  userId: "user-alice",
  stepNo: 1,
  callId: "call-1",
  toolName,
  argumentsJson: "{}",
  elevationSessionId: "",
});

const outcome = (resultCode: string): InvokeOutcome => ({
  fingerprint: "f",
  decision: { permit: true, code: "", reasons: [], policyIds: [] },
  resultCode,
  result: { result: null, evidence: [] },
  replayed: false,
  decisionMs: 0,
  toolMs: 0,
});

describe("tool-exec metrics", () => {
  it("times tool calls by registered tool and result code; an unregistered name is other", async () => {
    const metrics = createMetrics("tool-exec", { defaults: false });
    const results = [outcome("ok"), outcome("60302"), outcome("TOOL_NOT_AVAILABLE")];
    const invoke = withInvokeMetrics((async () => results.shift()!) as InvokeHandler, metrics, new Set(["knowledge_search"]));
    await invoke(cmd("knowledge_search"));
    await invoke(cmd("knowledge_search"));
    await invoke(cmd("made-up-by-the-caller"));
    const text = await metrics.text();
    expect(sampleValue(text, "steward_tool_call_duration_seconds_count", { tool: "knowledge_search", result: "ok" })).toBe(1);
    expect(sampleValue(text, "steward_tool_call_duration_seconds_count", { tool: "knowledge_search", result: "60302" })).toBe(1);
    expect(sampleValue(text, "steward_tool_call_duration_seconds_count", { tool: "other", result: "TOOL_NOT_AVAILABLE" })).toBe(1);
    for (const secret of ["made-up", "acme", "alice", "0b1c2d3e"]) expect(text).not.toContain(secret);
  });

  it("counts a call that throws as an error and passes the error on", async () => {
    const metrics = createMetrics("tool-exec", { defaults: false });
    const invoke = withInvokeMetrics(
      (async () => {
        throw new Error("no such run");
      }) as InvokeHandler,
      metrics,
      new Set(["save_note"]),
    );
    await expect(invoke(cmd("save_note"))).rejects.toThrow("no such run");
    expect(sampleValue(await metrics.text(), "steward_tool_call_duration_seconds_count", { tool: "save_note", result: "error" })).toBe(1);
  });

  it("times PDP questions by effect, an unanswered one as error", async () => {
    const metrics = createMetrics("tool-exec", { defaults: false });
    const answers: Array<boolean | Error> = [true, false, new Error("UNAVAILABLE")];
    const pdp: PolicyDecisionApi = {
      decide: async () => {
        const next = answers.shift()!;
        if (next instanceof Error) throw next;
        return { permit: next, code: next ? "" : "60500", reasons: [], policyIds: [] };
      },
      state: () => "ready",
      close: () => undefined,
    };
    const timed = withPdpMetrics(pdp, metrics);
    await timed.decide({} as Parameters<PolicyDecisionApi["decide"]>[0]);
    await timed.decide({} as Parameters<PolicyDecisionApi["decide"]>[0]);
    await expect(timed.decide({} as Parameters<PolicyDecisionApi["decide"]>[0])).rejects.toThrow("UNAVAILABLE");
    const text = await metrics.text();
    for (const effect of ["permit", "deny", "error"]) expect(sampleValue(text, "steward_pdp_ask_duration_seconds_count", { effect })).toBe(1);
  });
});
