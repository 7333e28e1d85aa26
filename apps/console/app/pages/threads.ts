import { ApiError } from "../api";
import { threads, type Thread } from "../conversation-api";
import { h, replace } from "../dom";
import { shortId, since } from "../format";

/** The caller's conversations, most recently active first, and the form that starts one. */
export function renderThreads(main: HTMLElement, open: (id: string) => void): () => void {
  let left = false;
  const status = h("p", { class: "muted", id: "threads-status", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  const title = h("input", { id: "thread-title", name: "title", type: "text", maxlength: "200", placeholder: "optional" });
  const body = h("tbody");

  const start = h(
    "form",
    {
      class: "card",
      "aria-labelledby": "new-thread-title",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        error.textContent = "";
        try {
          open((await threads.create(title.value.trim() || undefined)).id);
        } catch (err) {
          error.textContent = err instanceof ApiError ? err.message : "the thread could not be started";
        }
      },
    },
    h("h2", { id: "new-thread-title" }, "Start a conversation"),
    h("p", { class: "muted" }, "Each question in a thread sees the earlier questions, their answers and their tool steps."),
    h("label", { for: "thread-title" }, "Title"),
    title,
    h("button", { type: "submit" }, "Start"),
    error,
  );

  const row = (t: Thread) =>
    h(
      "tr",
      { "data-thread": t.id },
      h("td", {}, h("a", { href: `#/threads/${t.id}` }, t.title ?? shortId(t.id)), t.forked_from ? h("div", { class: "muted" }, "fork") : null),
      h("td", {}, String(t.run_count)),
      h("td", {}, since(t.updated_at)),
    );

  const refresh = async () => {
    try {
      const page = await threads.list();
      if (left) return;
      replace(body, ...page.items.map(row));
      status.textContent = page.total === 0 ? "No conversations yet." : `${page.items.length} of ${page.total} conversations shown`;
    } catch (err) {
      status.textContent = err instanceof ApiError ? err.message : "the threads could not be read";
    }
  };

  replace(
    main,
    h("h1", {}, "Threads"),
    start,
    h(
      "section",
      { class: "card", "aria-labelledby": "threads-title" },
      h("h2", { id: "threads-title" }, "Your conversations"),
      status,
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "runs", id: "threads" },
          h("caption", { class: "visually-hidden" }, "Your threads, most recently active first"),
          h("thead", {}, h("tr", {}, ...["Thread", "Runs", "Active"].map((c) => h("th", { scope: "col" }, c)))),
          body,
        ),
      ),
    ),
  );
  void refresh();
  return () => {
    left = true;
  };
}
