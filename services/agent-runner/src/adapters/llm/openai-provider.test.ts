import { getEventListeners } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ModelCallAbortedError, ModelUnavailableError, type ModelRequest } from "../../domain/model";
import { ChatCompletionsError } from "./chat-completions";
import { createOpenAiProvider } from "./openai-provider";

type Respond = (res: ServerResponse, request: { headers: IncomingHttpHeaders; body: string }) => void;

const chunk = (body: object) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", ...body })}\n\n`;

/**
 * A chat-completions endpoint that streams one short answer, holds the answer while `hold` is set, or with
 * `stall` sends the headers and a first chunk, then nothing more while keeping the connection open; or
 * answers as `respond` says. It counts the connections it was opened.
 */
function fakeEndpoint(options: { hold: boolean; stall?: boolean; onRequest?: () => void; respond?: Respond }) {
  let connections = 0;
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (piece: string) => (body += piece));
    req.on("end", () => {
      options.onRequest?.();
      if (options.respond) return options.respond(res, { headers: req.headers, body });
      if (options.hold) return; // never answers: the caller has to abort
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (options.stall) return void res.write(chunk({ choices: [{ index: 0, delta: { content: "h" }, finish_reason: null }] }));
      res.end(
        chunk({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] }) +
          chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }) +
          "data: [DONE]\n\n",
      );
    });
  });
  server.on("connection", () => connections++);
  return {
    connections: () => connections,
    async start(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const requestWith = (signal: AbortSignal): ModelRequest => ({ messages: [{ role: "user", content: "hello" }], tools: [], maxOutputTokens: 10, signal });

describe("createOpenAiProvider", () => {
  it("leaves no listener on the caller's signal once a call has ended", async () => {
    const endpoint = fakeEndpoint({ hold: false });
    const provider = createOpenAiProvider({ name: "primary", baseUrl: await endpoint.start(), apiKey: "k", model: "m" });
    const runSignal = new AbortController().signal;
    try {
      for (let i = 0; i < 5; i++) {
        await expect(provider.complete(requestWith(runSignal))).resolves.toMatchObject({ text: "hi", provider: "primary" });
      }
      // The SDK keeps the listener it adds on the signal it is given; that must not be the caller's.
      expect(getEventListeners(runSignal, "abort")).toHaveLength(0);
    } finally {
      await endpoint.stop();
    }
  });

  it("still aborts a call in flight when the caller's signal aborts", async () => {
    const caller = new AbortController();
    // Aborted once the request is in flight at the endpoint, not after a guessed delay.
    const endpoint = fakeEndpoint({ hold: true, onRequest: () => caller.abort() });
    const provider = createOpenAiProvider({ name: "primary", baseUrl: await endpoint.start(), apiKey: "k", model: "m" });
    try {
      const pending = provider.complete(requestWith(caller.signal));
      await expect(pending).rejects.toBeInstanceOf(ModelCallAbortedError);
      expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
    } finally {
      await endpoint.stop();
    }
  });

  it("gives up on an answer whose stream falls silent (a connection that died without closing)", async () => {
    const endpoint = fakeEndpoint({ hold: false, stall: true });
    const provider = createOpenAiProvider({ name: "primary", baseUrl: await endpoint.start(), apiKey: "k", model: "m", timeoutMs: 300 });
    const caller = new AbortController();
    try {
      // Without the bound this call never ends and jest's own timeout fails the test.
      await expect(provider.complete(requestWith(caller.signal))).rejects.toBeInstanceOf(ModelUnavailableError);
      expect(caller.signal.aborted).toBe(false);
    } finally {
      await endpoint.stop();
    }
  });

  it("never returns a cut answer when the caller aborts mid-stream", async () => {
    const endpoint = fakeEndpoint({ hold: false, stall: true });
    const provider = createOpenAiProvider({ name: "primary", baseUrl: await endpoint.start(), apiKey: "k", model: "m" });
    const caller = new AbortController();
    try {
      // Aborted once the first part of the answer has arrived.
      const pending = provider.complete({ ...requestWith(caller.signal), onDelta: () => caller.abort() });
      await expect(pending).rejects.toBeInstanceOf(ModelCallAbortedError);
    } finally {
      await endpoint.stop();
    }
  });

  it("asks the endpoint's chat completions with the key, the tools and a streamed answer, and assembles the answer's tool calls", async () => {
    let seen: { headers: IncomingHttpHeaders; body: string } | undefined;
    const endpoint = fakeEndpoint({
      hold: false,
      respond: (res, request) => {
        seen = request;
        res.writeHead(200, { "content-type": "text/event-stream" });
        const call = (part: object) => chunk({ choices: [{ index: 0, delta: { tool_calls: [part] }, finish_reason: null }] });
        res.write(call({ index: 0, id: "call_1", function: { name: "look", arguments: '{"q":' } }));
        res.write(call({ index: 0, function: { arguments: '"x"}' } }));
        res.end(
          chunk({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage: { prompt_tokens: 5, completion_tokens: 2 } }) + "data: [DONE]\n\n",
        );
      },
    });
    const provider = createOpenAiProvider({ name: "primary", baseUrl: `${await endpoint.start()}/`, apiKey: "sk-test", model: "m1" });
    try {
      const tool = { name: "look", description: "looks", parameters: { type: "object" } };
      const answer = await provider.complete({ ...requestWith(new AbortController().signal), tools: [tool] });
      expect(answer).toEqual({
        text: "",
        toolCalls: [{ id: "call_1", name: "look", arguments: '{"q":"x"}' }],
        finishReason: "tool_calls",
        usage: { input_tokens: 5, output_tokens: 2 },
        provider: "primary",
      });
      expect(seen!.headers.authorization).toBe("Bearer sk-test");
      expect(JSON.parse(seen!.body)).toEqual({
        model: "m1",
        messages: [{ role: "user", content: "hello" }],
        tools: [{ type: "function", function: tool }],
        max_tokens: 10,
        stream: true,
        stream_options: { include_usage: true },
      });
    } finally {
      await endpoint.stop();
    }
  });

  it("keeps one connection for answer after answer", async () => {
    const endpoint = fakeEndpoint({ hold: false });
    const provider = createOpenAiProvider({ name: "primary", baseUrl: await endpoint.start(), apiKey: "", model: "m" });
    try {
      for (let i = 0; i < 4; i++) await expect(provider.complete(requestWith(new AbortController().signal))).resolves.toMatchObject({ text: "hi" });
      expect(endpoint.connections()).toBe(1);
    } finally {
      await endpoint.stop();
    }
  });

  it("makes an error status, or an error sent in the stream, the provider unavailable, with the endpoint's words kept in the cause only", async () => {
    const answers: Respond[] = [
      (res) => res.writeHead(429, { "content-type": "application/json" }).end('{"error":{"message":"rate limited for org-secret"}}'),
      (res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(
          chunk({ choices: [{ index: 0, delta: { content: "partial" }, finish_reason: null }] }) +
            'data: {"error":{"message":"overloaded for org-secret"}}\n\n',
        );
      },
    ];
    for (const [i, respond] of answers.entries()) {
      const endpoint = fakeEndpoint({ hold: false, respond });
      const provider = createOpenAiProvider({ name: "primary", baseUrl: await endpoint.start(), apiKey: "k", model: "m" });
      try {
        const failure = await provider.complete(requestWith(new AbortController().signal)).catch((err: unknown) => err);
        expect(failure).toBeInstanceOf(ModelUnavailableError);
        expect((failure as Error).message).not.toContain("org-secret");
        const cause = (failure as Error).cause as ChatCompletionsError;
        expect(cause).toBeInstanceOf(ChatCompletionsError);
        expect(cause.status).toBe(i === 0 ? 429 : null);
        expect(cause.message).not.toContain("org-secret");
        expect(cause.body).toContain("org-secret");
      } finally {
        await endpoint.stop();
      }
    }
  });

  it("gives up on an endpoint that sends no headers within the timeout", async () => {
    const endpoint = fakeEndpoint({ hold: true });
    const provider = createOpenAiProvider({ name: "primary", baseUrl: await endpoint.start(), apiKey: "k", model: "m", timeoutMs: 300 });
    try {
      await expect(provider.complete(requestWith(new AbortController().signal))).rejects.toBeInstanceOf(ModelUnavailableError);
    } finally {
      await endpoint.stop();
    }
  });
});
