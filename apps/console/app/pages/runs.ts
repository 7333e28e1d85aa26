import { ApiError, runs, type RunSnapshot } from "../api";
import { announce, h, replace } from "../dom";
import { runDuration, shortId, since } from "../format";

const STATES = ["all", "queued", "running", "awaiting_input", "awaiting_confirmation", "succeeded", "failed", "cancelled"];
const POLL_MS = 3000;

/** The runs list (newest first, polled while shown), its filters and the form that starts a run. */
export function renderRuns(main: HTMLElement, open: (id: string) => void): () => void {
  let items: readonly RunSnapshot[] = [];
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const status = h("p", { class: "muted", id: "runs-status" });
  const error = h("p", { class: "error", role: "alert" });

  const input = h("textarea", { id: "run-input", name: "input", rows: "3", required: true, maxlength: "4000" });
  const mode = h(
    "select",
    { id: "run-mode", name: "mode" },
    h("option", { value: "agent" }, "agent (may use write tools)"),
    h("option", { value: "ask" }, "ask (read-only)"),
  );
  const language = h("input", { id: "run-language", name: "response_language", type: "text", maxlength: "35", placeholder: "e.g. en, fr" });
  const start = h(
    "form",
    {
      class: "card",
      "aria-labelledby": "start-title",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        error.textContent = "";
        try {
          const created = await runs.create({
            input: input.value,
            mode: mode.value,
            ...(language.value.trim() ? { response_language: language.value.trim() } : {}),
          });
          open(created.id);
        } catch (err) {
          error.textContent = err instanceof ApiError ? err.message : "the run could not be started";
        }
      },
    },
    h("h2", { id: "start-title" }, "Start a run"),
    h("label", { for: "run-input" }, "Input"),
    input,
    h(
      "div",
      { class: "row" },
      h("div", {}, h("label", { for: "run-mode" }, "Mode"), mode),
      h("div", {}, h("label", { for: "run-language" }, "Response language"), language),
    ),
    h("button", { type: "submit" }, "Start"),
    error,
  );

  const filter = h("select", { id: "state-filter" }, ...STATES.map((s) => h("option", { value: s }, s.replace("_", " "))));
  const search = h("input", { id: "run-search", type: "search", placeholder: "run id", autocomplete: "off" });
  const body = h("tbody");
  const table = h(
    "table",
    { class: "runs" },
    h("caption", { class: "visually-hidden" }, "Your runs, newest first"),
    h("thead", {}, h("tr", {}, ...["Run", "State", "Mode", "Age", "Duration", "Steps", "Tokens", "Error"].map((c) => h("th", { scope: "col" }, c)))),
    body,
  );

  const draw = () => {
    const state = filter.value;
    const needle = search.value.trim().toLowerCase();
    const shown = items.filter((r) => (state === "all" || r.state === state) && (!needle || r.id.includes(needle)));
    replace(
      body,
      ...shown.map((r) =>
        h(
          "tr",
          { "data-run": r.id },
          h("td", {}, h("a", { href: `#/runs/${r.id}`, title: r.input }, shortId(r.id)), h("div", { class: "muted clip" }, r.input)),
          h("td", {}, h("span", { class: `state state-${r.state}` }, r.state.replace("_", " "))),
          h("td", {}, r.mode),
          h("td", {}, since(r.created_at)),
          h("td", {}, runDuration(r.started_at, r.finished_at)),
          h("td", {}, String(r.usage?.model_calls ?? 0)),
          h("td", {}, String((r.usage?.input_tokens ?? 0) + (r.usage?.output_tokens ?? 0))),
          h("td", {}, r.error ? String(r.error.code) : ""),
        ),
      ),
    );
    status.textContent = `${shown.length} of ${items.length} runs shown`;
  };
  filter.addEventListener("change", draw);
  search.addEventListener("input", draw);

  const refresh = async () => {
    try {
      const page = await runs.list();
      const fresh = page.items.filter((r) => !items.some((o) => o.id === r.id)).length;
      if (items.length > 0 && fresh > 0) announce(`${fresh} new run${fresh > 1 ? "s" : ""}`);
      items = page.items;
      draw();
    } catch (err) {
      status.textContent = err instanceof ApiError ? err.message : "the runs could not be read";
    }
    if (!stopped) timer = setTimeout(() => void refresh(), POLL_MS);
  };

  replace(
    main,
    h("h1", {}, "Runs"),
    start,
    h(
      "section",
      { class: "card", "aria-labelledby": "list-title" },
      h("h2", { id: "list-title" }, "Your runs"),
      h(
        "div",
        { class: "row" },
        h("div", {}, h("label", { for: "state-filter" }, "State"), filter),
        h("div", {}, h("label", { for: "run-search" }, "Search by id"), search),
      ),
      status,
      h("div", { class: "scroll" }, table),
    ),
  );
  void refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
