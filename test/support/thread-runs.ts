import type { ChatRequest } from "./fake-openai";
import type { TestPlatform } from "./platform";
import { eventsOf } from "./runs";
import { waitFor } from "./wait-for";

/*
 * Runs in a thread, seen from outside (docs/threads.md "Context across turns"): the runner shows a thread's
 * earlier turns as user and assistant messages between the system prompt and a closing note, then the run's own
 * conversation. A fake model that answers the run's input must look past that note.
 */

/** The closing note of the earlier turns, and the lone note when every one was left out (docs/threads.md). */
const HISTORY_END =
  /^(End of the earlier turns\. The current request follows\.|\d+ earlier turns? of this conversation (is|are) left out to fit the model's window\.)$/;

type Message = ChatRequest["messages"][number];

const endOfHistory = (req: ChatRequest) => req.messages.findIndex((m) => m.role === "user" && HISTORY_END.test(String(m.content)));

/** The messages the thread's history became in a request (none for a run without earlier turns). */
export function historyOf(req: ChatRequest): Message[] {
  const end = endOfHistory(req);
  return end < 0 ? [] : req.messages.slice(1, end + 1);
}

/** The run's own messages in a request: everything after the thread's history (after the system prompt without one). */
export function ownMessagesOf(req: ChatRequest): Message[] {
  const end = endOfHistory(req);
  return req.messages.slice(end < 0 ? 1 : end + 1);
}

/** The run's own input: its first user message after the thread's history. */
export function ownInputOf(req: ChatRequest): string {
  return String(ownMessagesOf(req).find((m) => m.role === "user")?.content ?? "");
}

const ENDED = ["succeeded", "failed", "cancelled"];

/** Creates a run in a thread as `token`'s user; the run's id. */
export async function startInThread(platform: TestPlatform, token: string, threadId: string, input: string): Promise<string> {
  const created = await platform.http("POST", "/v1/agents/runs", { token, body: { input, thread_id: threadId } });
  if (created.status !== 201) throw new Error(`POST answered ${created.status}: ${JSON.stringify(created.body)}`);
  return created.body.id as string;
}

/** Waits (bounded) until the run is in one of `states` (default: ended); its snapshot. */
export function waitForState(platform: TestPlatform, token: string, runId: string, states: readonly string[] = ENDED): Promise<any> {
  return waitFor(
    async () => {
      const run = (await platform.http("GET", `/v1/agents/runs/${runId}`, { token })).body;
      return states.includes(run.state) ? run : undefined;
    },
    { timeoutMs: 60_000, what: `run ${runId} to reach ${states.join("|")}` },
  );
}

/** Creates a run in a thread and waits until it ends; its id and final snapshot. */
export async function turn(platform: TestPlatform, token: string, threadId: string, input: string): Promise<{ id: string; run: any }> {
  const id = await startInThread(platform, token, threadId, input);
  return { id, run: await waitForState(platform, token, id) };
}

/** The run's recorded `context.history` (its data), or undefined when it has none. */
export async function recordedHistoryOf(platform: TestPlatform, token: string, runId: string): Promise<any> {
  const events = await eventsOf(platform, token, runId);
  const recorded = events.filter((e) => e.type === "context.history");
  if (recorded.length > 1) throw new Error(`run ${runId} recorded its history ${recorded.length} times`);
  return recorded[0]?.data;
}

/** Whether a request carries a tool call or a tool result anywhere in its messages. */
export const hasToolMessages = (messages: readonly Message[]) =>
  messages.some((m) => m.role === "tool" || (m.role === "assistant" && (m.tool_calls?.length ?? 0) > 0));
