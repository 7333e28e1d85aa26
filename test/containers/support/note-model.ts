import type { ChatRequest, Reply } from "../../support/fake-openai";

// The container suite's runs and their model. Each run's input carries a tag and the model's time per tool step
// (`[tag:<tag>] [delay:<ms>]`); the model saves `toolSteps` notes into the knowledge base with save_note (a real
// write tool: the person approves each call, and the note is written with the call's idempotency record), one call
// per step, then answers. A note's title starts with the run's tag, so each note is traced back to its run. The
// step of a request is known from the tool results it carries: the model keeps no state.

export function noteInput(tag: string, delayMs: number): string {
  return `Save my notes [tag:${tag}] [delay:${delayMs}]`;
}

/** The arguments of the run's save_note call at `step` (titles "<tag> k<step>"). */
export function noteArguments(tag: string, step: number): { title: string; body: string } {
  return { title: `${tag} k${step}`, body: `Note ${step} of run ${tag}.` };
}

/** The tag of a run's input ("untagged" when it has none). */
export function tagOf(input: string): string {
  return /\[tag:([^\]]+)\]/.exec(input)?.[1] ?? "untagged";
}

/** The model: `delay` ms of thought before each save_note call, then the call; after `toolSteps` calls, a text. */
export function noteModel(toolSteps: number): (req: ChatRequest) => Promise<Reply> {
  return async (req) => {
    const input = String(req.messages.find((m) => m.role === "user")?.content ?? "");
    const tag = tagOf(input);
    const delayMs = Number(/\[delay:(\d+)\]/.exec(input)?.[1] ?? 0);
    const step = req.messages.filter((m) => m.role === "tool").length + 1;
    if (step > toolSteps) return { text: `done ${tag}` };
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    return { toolCalls: [{ id: `call_${step}`, name: "save_note", arguments: JSON.stringify(noteArguments(tag, step)) }] };
  };
}
