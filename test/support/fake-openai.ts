import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A chat-completions request as the fake received it. */
export interface ChatRequest {
  model: string;
  messages: Array<{ role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }>;
  tools?: Array<{ type: string; function: { name: string; description: string; parameters: unknown } }>;
  max_tokens?: number;
  stream?: boolean;
}

export type Reply =
  | { text: string; finish?: "stop" | "length"; holdBeforeFirstChunk?: Promise<void>; holdAfterFirstChunk?: Promise<void> }
  | { toolCalls: Array<{ id: string; name: string; arguments: string }> }
  | { status: number };

/** A test-owned OpenAI-compatible endpoint; `script` decides each answer from the request. */
export interface FakeOpenAi {
  baseUrl: string;
  requests: ChatRequest[];
  authorizations: string[];
  close(): Promise<void>;
}

function pieces(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Streams a reply as chat.completion.chunk events, the way OpenAI does: text in pieces, tool calls in fragments. */
async function streamReply(res: ServerResponse, model: string, reply: Exclude<Reply, { status: number }>, usage: object): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (choice: object | null, extra: object = {}) =>
    res.write(
      `data: ${JSON.stringify({ id: "chatcmpl-x", object: "chat.completion.chunk", created: 0, model, choices: choice ? [{ index: 0, ...choice }] : [], ...extra })}\n\n`,
    );
  send({ delta: { role: "assistant", content: "" }, finish_reason: null });
  if ("toolCalls" in reply) {
    reply.toolCalls.forEach((c, index) => {
      const [head, ...rest] = pieces(c.arguments, 3);
      send({ delta: { tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: head ?? "" } }] }, finish_reason: null });
      for (const part of rest) send({ delta: { tool_calls: [{ index, function: { arguments: part } }] }, finish_reason: null });
    });
    send({ delta: {}, finish_reason: "tool_calls" });
  } else {
    const [first, ...rest] = pieces(reply.text, 3);
    if (reply.holdBeforeFirstChunk) await reply.holdBeforeFirstChunk;
    if (first !== undefined) send({ delta: { content: first }, finish_reason: null });
    if (reply.holdAfterFirstChunk) await reply.holdAfterFirstChunk;
    for (const part of rest) send({ delta: { content: part }, finish_reason: null });
    send({ delta: {}, finish_reason: reply.finish ?? "stop" });
  }
  send(null, { usage });
  res.end("data: [DONE]\n\n");
}

/** Where the fake listens: loopback and a free port unless told (a container binds 0.0.0.0 on a set port). */
export interface ListenOptions {
  host?: string;
  port?: number;
}

export async function startFakeOpenAi(script: (req: ChatRequest, index: number) => Reply | Promise<Reply>, listen: ListenOptions = {}): Promise<FakeOpenAi> {
  const requests: ChatRequest[] = [];
  const authorizations: string[] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", async () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw) as ChatRequest;
      requests.push(body);
      authorizations.push(String(req.headers.authorization ?? ""));
      const reply = await script(body, requests.length - 1);
      if (res.destroyed || req.socket.destroyed) return;
      if ("status" in reply) {
        res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "upstream exploded: secret-sauce" } }));
        return;
      }
      const usage = { prompt_tokens: 100 + requests.length, completion_tokens: 10, total_tokens: 110 + requests.length };
      if (body.stream) {
        await streamReply(res, body.model, reply, usage);
        return;
      }
      const message =
        "toolCalls" in reply
          ? {
              role: "assistant",
              content: null,
              tool_calls: reply.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
            }
          : { role: "assistant", content: reply.text };
      const finish = "toolCalls" in reply ? "tool_calls" : (reply.finish ?? "stop");
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "chatcmpl-x",
          object: "chat.completion",
          created: 0,
          model: body.model,
          choices: [{ index: 0, message, finish_reason: finish }],
          usage,
        }),
      );
    });
  });
  const host = listen.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(listen.port ?? 0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${port}/v1`,
    requests,
    authorizations,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
