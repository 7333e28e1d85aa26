import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A scripted OpenAI-compatible chat-completions endpoint that answers at once. The run's input carries its
 * script as tags: `[iters:N]` tool iterations (default 10), then a final text; `[hold:MS]` holds every
 * answer that long (to keep runs in flight). Iteration k calls `test_counter` (a real tool with a PostgreSQL side effect) with `{"key":"k<k>"}`,
 * or the tool `[tool:NAME]` names (`test_lookup`: a read that keeps its result) with the same arguments;
 * the step is known from the tool results the request carries, so the script keeps no state. A request with
 * `stream: true` gets the answer as chat.completion.chunk server-sent events (all written at once).
 */
export interface FakeModel {
  readonly baseUrl: string;
  /** Requests answered so far. */
  readonly answered: () => number;
  close(): Promise<void>;
}

interface ChatRequest {
  model: string;
  stream?: boolean;
  messages: Array<{ role: string; content: string | null }>;
  tools?: Array<{ function: { name: string } }>;
}

function tag(input: string, name: string, fallback: number): number {
  const m = new RegExp(`\\[${name}:(\\d+)\\]`).exec(input);
  return m ? Number(m[1]) : fallback;
}

export async function startFakeModel(): Promise<FakeModel> {
  let answered = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ChatRequest;
      const input = String(body.messages.find((m) => m.role === "user")?.content ?? "");
      const iterations = tag(input, "iters", 10);
      const holdMs = tag(input, "hold", 0);
      const step = body.messages.filter((m) => m.role === "tool").length + 1;
      const offered = body.tools?.map((t) => t.function.name) ?? [];
      const wanted = /\[tool:([a-z_]+)\]/.exec(input)?.[1] ?? "test_counter";
      const toolName = offered.includes(wanted) ? wanted : (offered[0] ?? wanted);
      const message =
        step <= iterations
          ? {
              role: "assistant",
              content: null,
              tool_calls: [{ id: `call_${step}`, type: "function", function: { name: toolName, arguments: JSON.stringify({ key: `k${step}` }) } }],
            }
          : { role: "assistant", content: `done after ${iterations} tool calls` };
      const isTool = step <= iterations;
      const finish = isTool ? "tool_calls" : "stop";
      const usage = { prompt_tokens: 100 + step, completion_tokens: 10, total_tokens: 110 + step };
      const send = () => {
        answered++;
        if (res.destroyed) return;
        if (!body.stream) {
          const payload = JSON.stringify({
            id: `chatcmpl-${answered}`,
            object: "chat.completion",
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [{ index: 0, message, finish_reason: finish }],
            usage,
          });
          res.writeHead(200, { "content-type": "application/json" }).end(payload);
          return;
        }
        const chunk = (choice: object | null, extra: object = {}) =>
          `data: ${JSON.stringify({ id: `chatcmpl-${answered}`, object: "chat.completion.chunk", created: 0, model: body.model, choices: choice ? [{ index: 0, ...choice }] : [], ...extra })}\n\n`;
        const parts = [chunk({ delta: { role: "assistant", content: "" }, finish_reason: null })];
        if (isTool) {
          const call = (message as { tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> }).tool_calls[0];
          parts.push(
            chunk({
              delta: { tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.function.name, arguments: call.function.arguments } }] },
              finish_reason: null,
            }),
          );
        } else {
          parts.push(chunk({ delta: { content: (message as { content: string }).content }, finish_reason: null }));
        }
        parts.push(chunk({ delta: {}, finish_reason: finish }), chunk(null, { usage }), "data: [DONE]\n\n");
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" }).end(parts.join(""));
      };
      if (holdMs > 0) setTimeout(send, holdMs);
      else send();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    answered: () => answered,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The input of a scripted run: `iterations` tool calls (of `tool`, else test_counter), then a final text; every answer held `holdMs`. */
export function runInput(iterations: number, holdMs = 0, tool?: string): string {
  return `Count for me [iters:${iterations}]${holdMs ? ` [hold:${holdMs}]` : ""}${tool ? ` [tool:${tool}]` : ""}`;
}
