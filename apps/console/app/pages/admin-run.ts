import { failure, showNotAllowed, when } from "../admin-page";
import { adminRuns, type StoredEvent } from "../conversation-api";
import { h, replace } from "../dom";
import { shortId, str } from "../format";

/** The most telling field of an event, for one line. */
const gist = (e: StoredEvent): string => {
  const d = e.data;
  return str(d.tool_name ?? d.question ?? d.text ?? d.answer ?? (d.error as Record<string, unknown> | undefined)?.code ?? d.input ?? "").slice(0, 200);
};

/** Another user's run as an administrator reads it: the snapshot and its recorded events (the read is audited). */
export function renderAdminRun(main: HTMLElement, runId: string): () => void {
  let left = false;
  replace(main, h("p", { class: "muted" }, "Reading the run…"));
  void (async () => {
    try {
      const run = await adminRuns.get(runId);
      const events: StoredEvent[] = [];
      for (let after = 0; ;) {
        const page = await adminRuns.events(runId, after);
        events.push(...page.items);
        if (!page.has_more || page.items.length === 0) break;
        after = page.next_after;
      }
      if (left) return;
      replace(
        main,
        h("h1", {}, `Run ${shortId(run.id)}`),
        h(
          "p",
          { class: "muted", id: "admin-run-facts" },
          `by ${run.created_by} · `,
          h("span", { class: `state state-${run.state}` }, run.state.replace("_", " ")),
          run.error ? ` · error ${run.error.code}` : "",
          run.thread_id ? ` · in a thread` : "",
        ),
        h(
          "section",
          { class: "card" },
          h("h2", {}, "Input"),
          h("p", { class: "wrap" }, run.input),
          run.output ? h("div", {}, h("h2", {}, "Answer"), h("p", { class: "wrap" }, run.output.text)) : null,
        ),
        h(
          "section",
          { class: "card", "aria-labelledby": "admin-run-events-title" },
          h("h2", { id: "admin-run-events-title" }, `Events (${events.length})`),
          h(
            "table",
            { class: "admin", id: "admin-run-events" },
            h("thead", {}, h("tr", {}, ...["#", "Type", "What", "Recorded"].map((c) => h("th", { scope: "col" }, c)))),
            h(
              "tbody",
              {},
              ...events.map((e) =>
                h(
                  "tr",
                  { "data-seq": String(e.seq) },
                  h("td", {}, String(e.seq)),
                  h("td", {}, h("code", {}, e.type)),
                  h("td", { class: "wrap" }, gist(e)),
                  h("td", {}, when(e.recorded_at)),
                ),
              ),
            ),
          ),
        ),
        h("p", {}, h("a", { href: "#/admin/runs" }, "← All runs")),
      );
    } catch (err) {
      if (!left && !showNotAllowed(main, err))
        replace(main, h("h1", {}, "Run"), h("p", { class: "error", role: "alert" }, failure(err, "The run could not be read")));
    }
  })();
  return () => {
    left = true;
  };
}
