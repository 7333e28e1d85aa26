import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A chat-completions request as the fake received it. */
export interface ChatRequest {
  model: string;
  messages: Array<{ role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }>;
  tools?: Array<{ type: string; function: { name: string; description: string; parameters: unknown } }>;
  max_tokens?: number;
}

export type Reply =
  | { text: string; finish?: "stop" | "length" }
  | { toolCalls: Array<{ id: string; name: string; arguments: string }> }
  | { status: number };

/** A test-owned OpenAI-compatible endpoint; `script` decides each answer from the request. */
export interface FakeOpenAi {
  baseUrl: string;
  requests: ChatRequest[];
  authorizations: string[];
  close(): Promise<void>;
}

export async function startFakeOpenAi(script: (req: ChatRequest, index: number) => Reply | Promise<Reply>): Promise<FakeOpenAi> {
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
      const message =
        "toolCalls" in reply
          ? { role: "assistant", content: null, tool_calls: reply.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) }
          : { role: "assistant", content: reply.text };
      const finish = "toolCalls" in reply ? "tool_calls" : (reply.finish ?? "stop");
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message, finish_reason: finish }],
          usage: { prompt_tokens: 100 + requests.length, completion_tokens: 10, total_tokens: 110 + requests.length },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    authorizations,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
