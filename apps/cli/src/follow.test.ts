import type { Api } from "./api";
import type { EventView } from "./event-view";
import { followRun, type FollowOutput } from "./follow";
import type { LineReader } from "./prompt";

const RUN = "0b9f6a3e-3c1d-4d8e-9a7b-2f6c1e0d5a4b";
const FP = "a".repeat(64);
const sse = (seq: number, type: string, data: object = {}) => `id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ seq, type, data })}\n\n`;

/**
 * A stream that sends `parts` in order as the reader asks for them, each awaited first if it is a promise; a
 * part "BREAK" errors the stream (after everything before it was read, as a dropped connection would).
 */
function streamOf(parts: Array<string | Promise<string>>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const queue = [...parts];
  return new ReadableStream(
    {
      async pull(c) {
        if (queue.length === 0) return c.close();
        const text = await queue.shift();
        if (text === "BREAK") return c.error(new TypeError("terminated"));
        c.enqueue(encoder.encode(text));
      },
    },
    { highWaterMark: 0 },
  );
}

function fakeApi(streams: Array<(after: number) => ReadableStream<Uint8Array>>, eventsAfter: (seq: number) => EventView[] = () => []) {
  const posts: Array<{ path: string; body: unknown }> = [];
  const opened: number[] = [];
  let onPost: () => void = () => undefined;
  const posted = new Promise<void>((r) => (onPost = r));
  const api: Api = {
    baseUrl: "http://fake",
    async request<T>(method: string, path: string, options: { body?: unknown; query?: Record<string, unknown> } = {}): Promise<T> {
      if (method === "POST") {
        posts.push({ path, body: options.body });
        onPost();
        return { state: "running" } as T;
      }
      if (path.endsWith("/events")) return { items: eventsAfter(Number(options.query?.after)) } as T;
      return { state: "running" } as T;
    },
    async openStream(_id, after) {
      opened.push(after);
      const next = streams.shift();
      if (!next) throw new Error("no more streams");
      return next(after);
    },
  };
  return { api, posts, opened, posted };
}

function lines(...answers: Array<string | null>): LineReader & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    prompts,
    async ask(prompt) {
      prompts.push(prompt);
      return answers.length ? (answers.shift() as string | null) : null;
    },
    close() {},
  };
}

function recorder(): FollowOutput & { events: string[]; notes: string[] } {
  const events: string[] = [];
  const notes: string[] = [];
  return { events, notes, event: (v) => events.push(v.type), note: (t) => notes.push(t) };
}

const noSpinner = { start() {}, stop() {} };

describe("following a run", () => {
  it("answers a question with the next line (a number picks the option) and goes on to the end", async () => {
    const fake: ReturnType<typeof fakeApi> = fakeApi([
      () =>
        streamOf([
          sse(1, "run.queued"),
          sse(2, "ask_user", { question: "Which region?", options: ["EU", "US"] }),
          fake.posted.then(() => sse(3, "input.received", { answer: "US" }) + sse(4, "run.succeeded", { output: { text: "US", evidence: [] } })),
        ]),
    ]);
    const reader = lines("", "2");
    const out = recorder();
    await expect(followRun({ api: fake.api, output: out, reader, spinner: noSpinner }, RUN)).resolves.toBe("succeeded");
    expect(fake.posts).toEqual([{ path: `/v1/agents/runs/${RUN}/input`, body: { answer: "US" } }]);
    expect(reader.prompts).toEqual(["answer (1-2 or text)> ", "answer (1-2 or text)> "]);
    expect(out.events).toEqual(["run.queued", "ask_user", "input.received", "run.succeeded"]);
  });

  it("approves a confirmation bound to its fingerprint after an unclear answer", async () => {
    const fake: ReturnType<typeof fakeApi> = fakeApi([
      () =>
        streamOf([
          sse(1, "confirmation_required", { tool_name: "save_note", arguments: "{}", fingerprint: FP }),
          fake.posted.then(() => sse(2, "confirmation.decided", { decision: "approve" }) + sse(3, "run.failed", { error: { code: 60402, message: "x" } })),
        ]),
    ]);
    const reader = lines("maybe", "y");
    await expect(followRun({ api: fake.api, output: recorder(), reader, spinner: noSpinner }, RUN)).resolves.toBe("failed");
    expect(fake.posts).toEqual([{ path: `/v1/agents/runs/${RUN}/confirmation`, body: { decision: "approve", fingerprint: FP } }]);
    expect(reader.prompts).toHaveLength(2);
  });

  it("only shows a question that was answered already (an old one in the history)", async () => {
    const fake = fakeApi(
      [() => streamOf([sse(1, "ask_user", { question: "Q?" }), sse(2, "input.received", { answer: "a" }), sse(3, "run.succeeded", { output: null })])],
      (after) => (after === 1 ? [{ type: "input.received", seq: 2, data: {} }] : []),
    );
    const reader = lines("never used");
    await expect(followRun({ api: fake.api, output: recorder(), reader, spinner: noSpinner }, RUN)).resolves.toBe("succeeded");
    expect(reader.prompts).toEqual([]);
    expect(fake.posts).toEqual([]);
  });

  it("when the input has ended, says how to answer elsewhere and keeps following", async () => {
    const fake = fakeApi([() => streamOf([sse(1, "ask_user", { question: "Q?" }), sse(2, "run.cancelled", { error: { code: 60405, message: "c" } })])]);
    const out = recorder();
    await expect(followRun({ api: fake.api, output: out, reader: lines(null), spinner: noSpinner }, RUN)).resolves.toBe("cancelled");
    expect(out.notes.join("\n")).toContain(`steward runs answer|approve|reject ${RUN}`);
    expect(fake.posts).toEqual([]);
  });

  it("resumes a broken stream after the last event seen", async () => {
    const fake = fakeApi([() => streamOf([sse(1, "run.queued"), sse(2, "run.started"), "BREAK"]), () => streamOf([sse(3, "run.succeeded", { output: null })])]);
    const out = recorder();
    await expect(followRun({ api: fake.api, output: out, reader: lines(), spinner: noSpinner }, RUN)).resolves.toBe("succeeded");
    expect(fake.opened).toEqual([0, 2]);
    expect(out.events).toEqual(["run.queued", "run.started", "run.succeeded"]);
  }, 10_000);
});
