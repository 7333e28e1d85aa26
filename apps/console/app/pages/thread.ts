import { ApiError, TERMINAL_STATES, type RunSnapshot } from "../api";
import { threads, type Thread } from "../conversation-api";
import { h, replace } from "../dom";
import { since } from "../format";

const POLL_MS = 3000;

/**
 * One conversation: its runs in order (each opens the run page), the form that asks the next question (refused
 * by the API while a run is still active), forking at an ended run, and archiving.
 */
export function renderThread(main: HTMLElement, threadId: string, openRun: (id: string) => void, openThread: (id: string) => void): () => void {
  let left = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const error = h("p", { class: "error", role: "alert", id: "thread-error" });
  const heading = h("h1", {}, "Thread");
  const facts = h("p", { class: "muted", id: "thread-facts" });
  const list = h("ol", { class: "turns", id: "thread-runs", "aria-label": "The runs of this thread, oldest first" });
  const input = h("textarea", { id: "thread-input", name: "input", rows: "3", required: true, maxlength: "4000" });
  const ask = h("button", { type: "submit" }, "Ask");
  const archive = h("button", { type: "button", class: "secondary", id: "thread-archive" }, "Archive");

  const fail = (err: unknown, what: string) => (error.textContent = err instanceof ApiError ? `${what}: ${err.message}` : `${what}.`);

  const turn = (thread: Thread, run: RunSnapshot) => {
    const ended = TERMINAL_STATES.has(run.state);
    const fork = h(
      "button",
      {
        type: "button",
        class: "secondary",
        "data-fork": run.id,
        disabled: !ended,
        title: ended ? "A new thread with the conversation up to and including this run" : "A run can be forked at once it has ended",
        onclick: async () => {
          error.textContent = "";
          try {
            openThread((await threads.fork(thread.id, run.id)).id);
          } catch (err) {
            fail(err, "The thread could not be forked");
          }
        },
      },
      "Fork here",
    );
    return h(
      "li",
      { "data-run": run.id },
      h("a", { href: `#/runs/${run.id}` }, run.input),
      " ",
      h("span", { class: `state state-${run.state}` }, run.state.replace("_", " ")),
      run.output ? h("div", { class: "muted clip" }, run.output.text) : null,
      h("div", {}, fork),
    );
  };

  const draw = (thread: Thread) => {
    heading.textContent = thread.title ?? "Thread";
    const parts = [`${thread.run_count} run${thread.run_count === 1 ? "" : "s"}`, `started ${since(thread.created_at)}`];
    if (thread.archived_at) parts.push("archived");
    replace(facts, parts.join(" · "));
    if (thread.forked_from) facts.append(" · forked from ", h("a", { href: `#/threads/${thread.forked_from.thread_id}` }, "this thread"));
    replace(list, ...(thread.runs ?? []).map((r) => turn(thread, r)));
    const busy = (thread.runs ?? []).some((r) => !TERMINAL_STATES.has(r.state));
    ask.disabled = busy || thread.archived_at !== null;
    archive.disabled = thread.archived_at !== null;
  };

  const refresh = async () => {
    try {
      const thread = await threads.get(threadId);
      if (left) return;
      draw(thread);
      if ((thread.runs ?? []).some((r) => !TERMINAL_STATES.has(r.state))) timer = setTimeout(() => void refresh(), POLL_MS);
    } catch (err) {
      fail(err, "The thread could not be read");
    }
  };

  archive.addEventListener("click", async () => {
    error.textContent = "";
    try {
      draw(await threads.archive(threadId));
    } catch (err) {
      fail(err, "The thread could not be archived");
    }
  });

  const form = h(
    "form",
    {
      class: "card",
      "aria-labelledby": "ask-title",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        error.textContent = "";
        try {
          openRun((await threads.ask(threadId, input.value)).id);
        } catch (err) {
          fail(err, "The question could not be asked");
        }
      },
    },
    h("h2", { id: "ask-title" }, "Ask the next question"),
    h("label", { for: "thread-input" }, "Input"),
    input,
    ask,
  );

  replace(
    main,
    heading,
    facts,
    error,
    h("section", { class: "card", "aria-label": "Runs" }, list),
    form,
    h("p", {}, archive, " ", h("a", { href: "#/threads" }, "← Threads")),
  );
  void refresh();
  return () => {
    left = true;
    clearTimeout(timer);
  };
}
