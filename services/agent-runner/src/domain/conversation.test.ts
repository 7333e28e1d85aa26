import type { RunEvent } from "@steward/contract";
import { conversationOf, toolMessageContent } from "./conversation";
import { ownInputOf } from "./thread-history";

const queued = (responseLanguage: string | null): RunEvent => ({
  type: "run.queued",
  data: {
    input: "Summarise the refund policy",
    mode: "agent",
    response_language: responseLanguage,
    created_by: "u",
    created_at: "2026-11-30T09:00:00.000000Z",
    deadline_at: "2026-11-30T09:03:00.000000Z",
    thread_id: null,
  },
});
const started: RunEvent = { type: "run.started", data: { runner_id: "r", started_at: "2026-11-30T09:00:01.000000Z" } };
const thought: RunEvent = {
  type: "thought",
  data: {
    step_no: 1,
    text: "",
    tool_calls: [
      { call_id: "call-1", tool_name: "search", arguments: '{"q":"refund"}' },
      { call_id: "call-2", tool_name: "read", arguments: '{"id":"d1"}' },
    ],
    usage: { input_tokens: 1, output_tokens: 1 },
    provider: "primary",
  },
};
const toolCall: RunEvent = { type: "tool_call", data: { step_no: 1, call_id: "call-1", tool_name: "search", arguments: '{"q":"refund"}' } };
const toolResult: RunEvent = {
  type: "tool_result",
  data: {
    step_no: 1,
    call_id: "call-1",
    tool_name: "search",
    fingerprint: "f",
    result_code: "60302",
    result: { hits: 0 },
    evidence: [],
    decision: { permit: true, code: "", policy_ids: [] },
  },
};
const message: RunEvent = {
  type: "message",
  data: { step_no: 2, text: "Refunds within 30 days.", usage: { input_tokens: 1, output_tokens: 1 }, provider: "primary" },
};

describe("conversationOf", () => {
  it("given run.queued, then a system prompt followed by the user's input", () => {
    const messages = conversationOf([queued(null), started]);
    expect(messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(messages[1]).toEqual({ role: "user", content: "Summarise the refund policy" });
    expect(messages[0].content).not.toMatch(/language/);
  });

  it("given a response_language, then it follows the input as a user message, never in the system prompt", () => {
    const messages = conversationOf([queued("Deutsch")]);
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "user"]);
    expect(messages[0].content).not.toContain("Deutsch");
    expect(messages[2].content).toBe('Write your answer in this language: "Deutsch".');
  });

  it("given a thought, then an assistant message with its tool calls in order and null content for empty text", () => {
    const messages = conversationOf([queued(null), started, thought]);
    expect(messages[2]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call-1", type: "function", function: { name: "search", arguments: '{"q":"refund"}' } },
        { id: "call-2", type: "function", function: { name: "read", arguments: '{"id":"d1"}' } },
      ],
    });
  });

  it("given a tool result, then a tool message tied to its call, with result_code and result", () => {
    const messages = conversationOf([queued(null), started, thought, toolCall, toolResult]);
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    const tool = messages[3];
    if (tool.role !== "tool") throw new Error("expected a tool message");
    expect(tool.tool_call_id).toBe("call-1");
    expect(JSON.parse(tool.content)).toEqual({ result_code: "60302", result: { hits: 0 } });
  });

  it("given a final message, then the assistant's text closes the conversation", () => {
    const messages = conversationOf([queued(null), started, thought, toolCall, toolResult, message]);
    expect(messages[messages.length - 1]).toEqual({ role: "assistant", content: "Refunds within 30 days." });
  });

  it("ignores lifecycle events that the model does not see", () => {
    const done: RunEvent = { type: "run.succeeded", data: { output: { text: "x", evidence: [] }, finished_at: "2026-11-30T09:01:00.000000Z" } };
    expect(conversationOf([queued(null), started, toolCall, done])).toHaveLength(2);
  });
});

describe("conversationOf in a thread", () => {
  const inThread: RunEvent = { ...queued("English"), data: { ...(queued("English").data as object), thread_id: "t1" } } as RunEvent;
  const history: RunEvent = {
    type: "context.history",
    data: {
      thread_id: "t1",
      turns: [
        {
          run_id: "r1",
          status: "succeeded",
          input: "Where is the Lisbon office?",
          answer: "On Rua Augusta.",
          steps: ['- step 1 search: ok {"city":"Lisbon"}'],
          steps_dropped: 1,
        },
        { run_id: "r2", status: "cancelled", input: "And Porto?", answer: null, steps: [], steps_dropped: 0 },
      ],
      dropped: [{ run_id: "r1", part: "steps", reason: "budget", steps: 1, tokens: 30 }],
      tokens: 60,
      budget_tokens: 100,
    },
  };

  it("given a recorded history, then the earlier turns sit between the system prompt and the run's own input", () => {
    const messages = conversationOf([inThread, started, history, thought, toolCall, toolResult]);
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "user", "user", "assistant", "user", "user", "user", "user", "user", "assistant", "tool"]);
    expect(messages.slice(1, 9).map((m) => m.content)).toEqual([
      "Earlier turns of this conversation follow, oldest first.",
      "Where is the Lisbon office?",
      'Tool steps of that turn, oldest first (tool output, for reference only; 1 earlier step left out):\n- step 1 search: ok {"city":"Lisbon"}',
      "On Rua Augusta.",
      "And Porto?",
      "That turn ended cancelled without an answer.",
      "End of the earlier turns. The current request follows.",
      "Summarise the refund policy",
    ]);
    expect(ownInputOf(messages)).toBe("Summarise the refund policy");
    expect(messages[9].content).toBe('Write your answer in this language: "English".');
    // The system prompt is the same as without a thread; no history text reaches it.
    expect(messages[0]).toEqual(conversationOf([queued(null)])[0]);
    // Every tool message still follows the assistant message that called it.
    expect(messages.filter((m) => m.role === "tool").map((m) => (m.role === "tool" ? m.tool_call_id : ""))).toEqual(["call-1"]);
  });

  it("given a run without a recorded history, then exactly the conversation of a run without a thread", () => {
    const plain = [queued(null), started, thought, toolCall, toolResult, message];
    const threaded = plain.map((e) => (e.type === "run.queued" ? ({ ...e, data: { ...e.data, thread_id: "t1" } } as RunEvent) : e));
    expect(conversationOf(threaded)).toEqual(conversationOf(plain));
  });
});

describe("toolMessageContent", () => {
  it("serialises the result code and the result", () => {
    expect(JSON.parse(toolMessageContent("ok", [1, "a"]))).toEqual({ result_code: "ok", result: [1, "a"] });
  });
});
