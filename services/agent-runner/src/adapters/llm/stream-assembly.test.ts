import { assembleStream, type CompletionChunk } from "./stream-assembly";

async function* chunks(list: CompletionChunk[]) {
  for (const c of list) yield c;
}

describe("assembleStream", () => {
  it("concatenates text deltas, passes each to onDelta, and reads the usage chunk", async () => {
    const seen: string[] = [];
    const answer = await assembleStream(
      chunks([
        { choices: [{ delta: { content: "Hel" } }] },
        { choices: [{ delta: { content: "lo" }, finish_reason: "stop" }] },
        { choices: [], usage: { prompt_tokens: 7, completion_tokens: 2 } },
      ]),
      (d) => seen.push(d),
    );
    expect(answer).toEqual({ text: "Hello", toolCalls: [], finishReason: "stop", usage: { input_tokens: 7, output_tokens: 2 } });
    expect(seen).toEqual(["Hel", "lo"]);
  });

  it("assembles interleaved tool-call fragments by index, in index order", async () => {
    const answer = await assembleStream(
      chunks([
        { choices: [{ delta: { tool_calls: [{ index: 1, id: "b", function: { name: "second", arguments: '{"x"' } }] } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, id: "a", function: { name: "first", arguments: "{" } }] } }] },
        { choices: [{ delta: { tool_calls: [{ index: 1, function: { arguments: ":1}" } }] } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: "}" } }] }, finish_reason: "tool_calls" }] },
      ]),
    );
    expect(answer.toolCalls).toEqual([
      { id: "a", name: "first", arguments: "{}" },
      { id: "b", name: "second", arguments: '{"x":1}' },
    ]);
    expect(answer.finishReason).toBe("tool_calls");
  });

  it("reports an unknown finish reason as other", async () => {
    expect((await assembleStream(chunks([{ choices: [{ delta: {}, finish_reason: "content_filter" }] }]))).finishReason).toBe("other");
  });
});
