import { getEventListeners } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ModelCallAbortedError, ModelUnavailableError, type ModelRequest } from "../../domain/model";
import { createOpenAiProvider } from "./openai-provider";

/**
 * A chat-completions endpoint that streams one short answer, holds the answer while `hold` is set, or with
 * `stall` sends the headers and a first chunk, then nothing more while keeping the connection open.
 */
function fakeEndpoint(options: { hold: boolean; stall?: boolean; onRequest?: () => void }) {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      options.onRequest?.();
      if (options.hold) return; // never answers: the caller has to abort
      const chunk = (body: object) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", ...body })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (options.stall) return void res.write(chunk({ choices: [{ index: 0, delta: { content: "h" }, finish_reason: null }] }));
      res.end(
        chunk({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] }) +
          chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }) +
          "data: [DONE]\n\n",
      );
    });
  });
  return {
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
});
