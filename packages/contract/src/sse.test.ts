import { createSseParser, type SseEvent } from "./sse";

describe("the SSE parser", () => {
  it("parses events fed in arbitrary pieces, with ids, names, multi-line data; skips comments and retry", () => {
    const got: SseEvent[] = [];
    const parser = createSseParser((e) => got.push(e));
    const text = 'retry: 1000\n\n: keep-alive\n\nid: 1\nevent: run.queued\ndata: {"seq":1}\n\nevent: message.delta\ndata: a\ndata: b\r\n\r\ndata:plain\n\n';
    for (const piece of text.match(/.{1,3}/gs) ?? []) parser.feed(piece);
    expect(got).toEqual([
      { event: "run.queued", id: "1", data: '{"seq":1}' },
      { event: "message.delta", data: "a\nb" },
      { event: "message", data: "plain" },
    ]);
  });

  it("waits for the \\n after a \\r that ends a piece", () => {
    const got: SseEvent[] = [];
    const parser = createSseParser((e) => got.push(e));
    parser.feed("data: x\r");
    parser.feed("\n\r");
    expect(got).toEqual([]);
    parser.feed("\n");
    expect(got).toEqual([{ event: "message", data: "x" }]);
  });
});
