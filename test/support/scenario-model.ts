import { ownInputOf } from "../../services/agent-runner/src/domain/thread-history";
import type { ChatRequest, Reply } from "./fake-openai";

/** The run's own input: in a thread's later runs the earlier turns come first (docs/threads.md). */
const inputOf = (req: ChatRequest) =>
  ownInputOf(req.messages.filter((m) => m.role === "user").map((m) => ({ role: "user" as const, content: String(m.content) })));
const toolResults = (req: ChatRequest) => req.messages.filter((m) => m.role === "tool").map((m) => JSON.parse(String(m.content)));
const call = (id: string, name: string, args: unknown): Reply => ({ toolCalls: [{ id, name, arguments: JSON.stringify(args) }] });

/**
 * A scripted model for the suites that drive runs as a user would (the CLI, the console): the first word of the
 * question picks the scenario — `refund` searches the knowledge base then answers `refundAnswer`, `region` asks
 * the user to choose, `note` calls the write tool that waits for approval, `wait` asks and never goes on,
 * `propose` proposes the rest of the question as knowledge (propose_knowledge) and answers with the tool's
 * result code; anything else answers "ok".
 */
export function scenarioModel(refundAnswer: string): (req: ChatRequest) => Reply {
  return (req) => {
    const input = inputOf(req);
    const results = toolResults(req);
    switch (input.split(" ")[0]) {
      case "refund":
        return results.length === 0 ? call("k0", "knowledge_search", { query: "refund" }) : { text: refundAnswer };
      case "region":
        return results.length === 0
          ? call("q0", "ask_user", { question: "Which region?", options: ["EU", "US"] })
          : { text: `region is ${results[0].result.answer}` };
      case "note":
        return results.length === 0
          ? call("n0", "save_note", { title: `Note ${input}`, body: "We ship on Friday." })
          : { text: `note ${results[0].result_code}` };
      case "propose":
        return results.length === 0
          ? call("p0", "propose_knowledge", { title: "Proposed by the agent", content: input.slice("propose ".length) || "nothing" })
          : { text: `proposal ${results[0].result_code}` };
      case "wait":
        return call("w0", "ask_user", { question: "Still there?" });
      default:
        return { text: "ok" };
    }
  };
}
