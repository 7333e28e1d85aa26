import type { Api } from "./api";
import { ApiError, UnreachableError } from "./errors";
import { TERMINAL_TYPES, eventViewOf, stateOfTerminal, type EventView } from "./event-view";
import type { LineReader } from "./prompt";
import { readSse } from "./sse";
import type { Spinner } from "./style";

/** Where a followed run's events go: NDJSON for scripts, or rendered text for a person. */
export interface FollowOutput {
  /** Writes one event (stdout). */
  event(view: EventView): void;
  /** Tells the person something (stderr): hints, prompts' context. */
  note(text: string): void;
}

export interface FollowDeps {
  readonly api: Api;
  readonly output: FollowOutput;
  readonly reader: LineReader;
  readonly spinner: Spinner;
}

/** How often a broken stream is opened again before giving up (1 s apart). */
const RECONNECTS = 5;
const FINGERPRINT = /^[0-9a-f]{64}$/;
const ANSWERED = new Set(["input.received", "confirmation.decided", ...TERMINAL_TYPES]);

interface Page {
  items: EventView[];
}

/**
 * Follows a run's events live until it ends, and answers in place: a question (`ask_user`) is answered with
 * the next line of input (a number picks an option), an approval (`confirmation_required`) with y or n. A
 * question already answered when it is seen (an old one in the history) is only shown. A broken stream is
 * resumed after the last event seen. Resolves with the run's final state.
 */
export async function followRun(deps: FollowDeps, runId: string, after = 0): Promise<string> {
  const { api, output, reader, spinner } = deps;
  let last = after;
  let inputEnded = false;
  let failures = 0;

  /** True when nothing after `seq` shows the question answered or the run ended. */
  async function stillWaiting(seq: number | undefined): Promise<boolean> {
    if (seq === undefined) return false;
    const page = await api.request<Page>("GET", `/v1/agents/runs/${runId}/events`, { query: { after: seq, limit: 100 } });
    return !page.items.some((e) => ANSWERED.has(e.type));
  }

  async function nextLine(prompt: string): Promise<string | null> {
    if (inputEnded) return null;
    const line = await reader.ask(prompt);
    if (line === null) {
      inputEnded = true;
      output.note(`no more input: the run waits; answer it with \`steward runs answer|approve|reject ${runId}\``);
    }
    return line;
  }

  async function post(path: string, body: unknown): Promise<void> {
    try {
      await api.request("POST", `/v1/agents/runs/${runId}/${path}`, { body });
    } catch (err) {
      if (err instanceof ApiError && err.problem.status === 409) output.note("the run no longer waits for this: it was answered or has ended");
      else throw err;
    }
  }

  async function answerQuestion(view: EventView): Promise<void> {
    if (inputEnded || !(await stillWaiting(view.seq))) return;
    const options = Array.isArray(view.data.options) ? view.data.options.map(String) : [];
    for (;;) {
      const line = await nextLine(options.length ? `answer (1-${options.length} or text)> ` : "answer> ");
      if (line === null) return;
      const text = line.trim();
      if (!text) continue;
      const picked = /^[1-9][0-9]*$/.test(text) ? options[Number(text) - 1] : undefined;
      return post("input", { answer: picked ?? text });
    }
  }

  async function decideConfirmation(view: EventView): Promise<void> {
    if (inputEnded || !(await stillWaiting(view.seq))) return;
    for (;;) {
      const line = await nextLine("approve? [y/n]> ");
      if (line === null) return;
      const word = line.trim().toLowerCase();
      const decision = ["y", "yes", "approve"].includes(word) ? "approve" : ["n", "no", "reject"].includes(word) ? "reject" : null;
      if (!decision) continue;
      const fingerprint = typeof view.data.fingerprint === "string" && FINGERPRINT.test(view.data.fingerprint) ? view.data.fingerprint : undefined;
      return post("confirmation", { decision, ...(fingerprint ? { fingerprint } : {}) });
    }
  }

  for (;;) {
    let stream: ReadableStream<Uint8Array>;
    try {
      spinner.start("waiting for the run");
      stream = await api.openStream(runId, last);
      failures = 0;
      for await (const sse of readSse(stream)) {
        const view = eventViewOf(sse);
        spinner.stop();
        output.event(view);
        if (view.seq !== undefined) last = view.seq;
        if (TERMINAL_TYPES.has(view.type)) return stateOfTerminal(view.type);
        if (view.type === "ask_user") await answerQuestion(view);
        else if (view.type === "confirmation_required") await decideConfirmation(view);
        spinner.start("waiting for the run");
      }
    } catch (err) {
      spinner.stop();
      if (err instanceof ApiError) throw err;
      failures += 1;
      if (failures > RECONNECTS) throw err instanceof UnreachableError ? err : new UnreachableError(`the event stream broke: ${(err as Error).message}`);
      output.note(`the event stream broke; resuming after event ${last}`);
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    spinner.stop();
    // The stream ended without a terminal event (the gateway restarted, say): ask how the run stands.
    const run = await api.request<{ state: string }>("GET", `/v1/agents/runs/${runId}`);
    if (["succeeded", "failed", "cancelled"].includes(run.state)) {
      const rest = await api.request<Page>("GET", `/v1/agents/runs/${runId}/events`, { query: { after: last, limit: 1000 } });
      for (const e of rest.items) output.event(e);
      return run.state;
    }
  }
}
