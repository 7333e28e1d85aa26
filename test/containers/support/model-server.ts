import { startFakeOpenAi, type ChatRequest, type Reply } from "../../support/fake-openai";
import { noteModel } from "./note-model";

// The container suite's model as a process of its own, compiled to CommonJS with its imports by
// model-files.ts and run with node in a container. Stateless: each answer follows from the request.
// - input tagged `[tag:...]`: the note model (TOOL_STEPS save_note calls, then an answer; note-model.ts);
// - anything else: one knowledge_search for the input, then an answer naming the first passage found.
const port = Number(process.env.PORT ?? 8000);
const notes = noteModel(Number(process.env.TOOL_STEPS ?? 3));

function grounded(req: ChatRequest): Reply {
  const input = String(req.messages.find((m) => m.role === "user")?.content ?? "");
  const tool = req.messages.find((m) => m.role === "tool");
  if (!tool) return { toolCalls: [{ id: "call_search", name: "knowledge_search", arguments: JSON.stringify({ query: input }) }] };
  const found = JSON.parse(String(tool.content)) as { result?: { passages?: Array<{ title: string }> } };
  return { text: `From ${found.result?.passages?.[0]?.title ?? "nothing"}.` };
}

function script(req: ChatRequest): Reply | Promise<Reply> {
  const input = String(req.messages.find((m) => m.role === "user")?.content ?? "");
  return /\[tag:/.test(input) ? notes(req) : grounded(req);
}

void startFakeOpenAi(script, { host: "0.0.0.0", port }).then((fake) => {
  // Nothing is read back from this process: what it records is dropped so a long scenario stays small.
  setInterval(() => {
    fake.requests.length = 0;
    fake.authorizations.length = 0;
  }, 10_000).unref();
  console.log(`model listening on ${port}`);
});
