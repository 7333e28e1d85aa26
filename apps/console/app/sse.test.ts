import { describe, expect, it } from "@jest/globals";
import { createSseParser, followEvents, type SseMessage } from "./sse";

function parsed(chunks: string[]): { messages: SseMessage[]; retries: number[] } {
  const messages: SseMessage[] = [];
  const retries: number[] = [];
  const parse = createSseParser(
    (m) => messages.push(m),
    (ms) => retries.push(ms),
  );
  for (const chunk of chunks) parse(chunk);
  return { messages, retries };
}

describe("createSseParser", () => {
  it("reads event, multi-line data, id and retry across chunk boundaries and line endings; skips comments", () => {
    const { messages, retries } = parsed([": hello\n", "retry: 25\r\nid: 7\r", '\nevent: thought\ndata: {"a":', "1}\ndata: two\n", "\n", "data: bare\n\n"]);
    expect(messages).toEqual([
      { event: "thought", data: '{"a":1}\ntwo', id: "7" },
      { event: "message", data: "bare" },
    ]);
    expect(retries).toEqual([25]);
  });

  it("sends nothing for a block without data, ignores an id with NUL and a retry that is not a number", () => {
    const { messages, retries } = parsed(["event: ping\n\n", "id: a\0b\nretry: soon\ndata: x\n\n"]);
    expect(messages).toEqual([{ event: "message", data: "x" }]);
    expect(retries).toEqual([]);
  });

  it("takes a CRLF split between chunks as one line end, not as the end of the message", () => {
    expect(parsed(["data: x\r", "\ndata: y\r\n\r\n"]).messages).toEqual([{ event: "message", data: "x\ny" }]);
  });

  it("holds back a message until its blank line", () => {
    expect(parsed(["data: half"]).messages).toEqual([]);
  });
});

/** A response whose body streams `text` and then closes. */
const streamed = (text: string) =>
  new Response(new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode(text)), c.close()) }), {
    status: 200,
    headers: { "content-type": "text/event-stream" },
  });

describe("followEvents", () => {
  it("resumes a stream that closed before the terminal event with Last-Event-ID, and ends after it", async () => {
    const asked: (string | null)[] = [];
    const answers = [
      streamed("retry: 5\n\nid: 1\nevent: run.queued\ndata: {}\n\nid: 2\nevent: run.started\ndata: {}\n\n"),
      streamed("id: 3\nevent: run.succeeded\ndata: {}\n\n"),
    ];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async (_path: unknown, init?: RequestInit) => {
      asked.push(new Headers(init?.headers).get("last-event-id"));
      return answers.shift() ?? new Response("{}", { status: 500 });
    }) as typeof fetch;
    const seen: string[] = [];
    const statuses: string[] = [];
    try {
      await followEvents({
        path: "/v1/agents/runs/r/events",
        token: "t",
        signal: new AbortController().signal,
        finished: () => seen.includes("run.succeeded"),
        onMessage: (m) => seen.push(m.event),
        onStatus: (s) => statuses.push(s),
      });
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(asked).toEqual([null, "2"]);
    expect(seen).toEqual(["run.queued", "run.started", "run.succeeded"]);
    expect(statuses).toEqual(["live", "reconnecting", "live", "ended"]);
  });

  it("stops on a refusal with the problem's detail", async () => {
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async () => new Response(JSON.stringify({ detail: "run not found" }), { status: 404 })) as typeof fetch;
    const statuses: [string, string | undefined][] = [];
    try {
      await followEvents({
        path: "/x",
        token: "t",
        signal: new AbortController().signal,
        finished: () => false,
        onMessage: () => undefined,
        onStatus: (s, d) => statuses.push([s, d]),
      });
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(statuses).toEqual([["ended", "run not found"]]);
  });
});
