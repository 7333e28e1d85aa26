import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { createSseParser, type SseEvent } from "@steward/contract";
import type { CompletionChunk } from "./stream-assembly";

/** What the endpoint said instead of an answer; its words stay in `body`, which is never shown or logged at info. */
export class ChatCompletionsError extends Error {
  constructor(
    readonly status: number | null,
    readonly body: string,
  ) {
    super(status === null ? "the endpoint sent an error in its stream" : `the endpoint answered HTTP ${status}`);
    this.name = "ChatCompletionsError";
  }
}

export interface ChatCompletionsEndpoint {
  /** The API's base, e.g. `https://api.openai.com/v1`; `/chat/completions` is added to it. */
  readonly baseUrl: string;
  /** Sent as a bearer token when set. */
  readonly apiKey: string;
  /** The longest wait for the answer's headers, in ms. */
  readonly timeoutMs: number;
}

/** The most of an error answer's body kept (for the operator's debug log); the rest is read and dropped. */
const ERROR_BODY_MAX = 4096;

/**
 * Streams chat-completion chunks from an OpenAI-compatible endpoint over plain node:http(s), one kept-alive
 * connection pool per endpoint. A request that answers anything but 2xx, or an error event in the stream,
 * rejects with ChatCompletionsError; a silent endpoint with a timeout error before the headers; an abort
 * through `signal` ends the request and its stream with an AbortError.
 */
export function chatCompletions(endpoint: ChatCompletionsEndpoint) {
  const url = new URL(`${endpoint.baseUrl.replace(/\/+$/, "")}/chat/completions`);
  const secure = url.protocol === "https:";
  if (!secure && url.protocol !== "http:") throw new TypeError(`the model's base URL must be http or https, not ${url.protocol}`);
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;

  function answer(body: string, signal: AbortSignal): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const payload = Buffer.from(body);
      const req = send(url, {
        method: "POST",
        agent,
        signal,
        timeout: endpoint.timeoutMs,
        headers: {
          "content-type": "application/json",
          "content-length": payload.length,
          accept: "text/event-stream",
          ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
        },
      });
      // The timeout counts silence on the socket until the headers; after them the caller bounds the stream.
      req.on("timeout", () => req.destroy(new Error(`no answer within ${endpoint.timeoutMs} ms`)));
      req.on("error", reject);
      req.on("response", (res) => {
        req.setTimeout(0);
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve(res);
        void errorBody(res).then((text) => reject(new ChatCompletionsError(status, text)), reject);
      });
      req.end(payload);
    });
  }

  return async function* stream(request: Readonly<Record<string, unknown>>, signal: AbortSignal): AsyncGenerator<CompletionChunk> {
    const res = await answer(JSON.stringify({ ...request, stream: true }), signal);
    res.setEncoding("utf8");
    let done = false;
    const events: SseEvent[] = [];
    const parser = createSseParser((event) => events.push(event));
    try {
      // Leaving the loop early must not destroy the response by itself: `finally` decides what becomes of its socket.
      for await (const piece of res.iterator({ destroyOnReturn: false }) as AsyncIterable<string>) {
        parser.feed(piece);
        for (const event of events.splice(0)) {
          if (event.data === "[DONE]") {
            done = true;
            return;
          }
          const parsed = JSON.parse(event.data) as CompletionChunk & { error?: unknown };
          if (event.event === "error" || (parsed && typeof parsed === "object" && parsed.error !== undefined)) {
            throw new ChatCompletionsError(null, event.data.slice(0, ERROR_BODY_MAX));
          }
          yield parsed;
        }
      }
    } finally {
      if (done) await finishQuietly(res);
      // Ended early (the caller stopped reading, or threw): a socket half read is never reused.
      else if (!res.complete) res.destroy();
    }
  };
}

/** How long the rest of a finished answer (after `[DONE]`) may take to arrive before its socket is dropped, ms. */
const TAIL_MS = 1000;

/**
 * The answer is complete: the rest of its body is read off the wire so that its socket goes back to the pool,
 * before the caller asks again when it has all arrived already, else in the background, for `TAIL_MS` at most.
 */
async function finishQuietly(res: IncomingMessage): Promise<void> {
  const ended = new Promise<void>((resolve) => res.once("close", resolve));
  res.resume();
  if (res.complete) return ended;
  const drop = setTimeout(() => res.destroy(), TAIL_MS).unref();
  void ended.then(() => clearTimeout(drop));
}

async function errorBody(res: IncomingMessage): Promise<string> {
  res.setEncoding("utf8");
  let text = "";
  for await (const piece of res) if (text.length < ERROR_BODY_MAX) text += piece as string;
  return text.slice(0, ERROR_BODY_MAX);
}

export type ChatCompletionsStream = ReturnType<typeof chatCompletions>;
