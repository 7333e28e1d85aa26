import { failure, showNotAllowed, when } from "../admin-page";
import { adminRuns, type AdminRun, type AdminRunFilter } from "../conversation-api";
import { announce, h, replace } from "../dom";

const STATES = ["", "queued", "running", "awaiting_input", "awaiting_confirmation", "succeeded", "failed", "cancelled"];

/** Every user's runs of the tenant, for administrators; each read is written to the audit log by the gateway. */
export function renderAdminRuns(main: HTMLElement): () => void {
  let left = false;
  let page = 1;
  const user = h("input", { id: "admin-run-user", type: "search", autocomplete: "off", spellcheck: "false" });
  const state = h("select", { id: "admin-run-state" }, ...STATES.map((s) => h("option", { value: s }, s || "any")));
  const code = h("input", { id: "admin-run-code", type: "search", autocomplete: "off", placeholder: "e.g. 60405" });
  const body = h("tbody");
  const position = h("p", { class: "muted", id: "admin-runs-position", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  const previous = h("button", { type: "button", class: "secondary", onclick: () => void load(page - 1) }, "← Previous");
  const next = h("button", { type: "button", class: "secondary", onclick: () => void load(page + 1) }, "Next →");

  const filter = (): AdminRunFilter => ({
    ...(user.value.trim() ? { user: user.value.trim() } : {}),
    ...(state.value ? { state: state.value } : {}),
    ...(code.value.trim() ? { code: code.value.trim() } : {}),
  });

  async function load(wanted: number): Promise<void> {
    error.textContent = "";
    try {
      const got = await adminRuns.list(filter(), wanted);
      if (left) return;
      page = got.page;
      replace(body, ...got.items.map(row));
      position.textContent = got.total ? `Runs ${(page - 1) * got.page_size + 1}–${(page - 1) * got.page_size + got.items.length} of ${got.total}, newest first` : "No runs match.";
      previous.disabled = page <= 1;
      next.disabled = page * got.page_size >= got.total;
      announce(position.textContent);
    } catch (err) {
      if (!showNotAllowed(main, err)) error.textContent = failure(err, "The runs could not be read");
      else left = true;
    }
  }

  const form = h(
    "form",
    {
      class: "row",
      role: "search",
      onsubmit: (event: Event) => {
        event.preventDefault();
        void load(1);
      },
    },
    h("div", {}, h("label", { for: "admin-run-user" }, "User"), user),
    h("div", {}, h("label", { for: "admin-run-state" }, "State"), state),
    h("div", {}, h("label", { for: "admin-run-code" }, "Error code"), code),
    h("div", { class: "filter-go" }, h("button", { type: "submit" }, "Apply")),
  );

  replace(
    main,
    h("h1", {}, "All runs"),
    h(
      "section",
      { class: "card", "aria-labelledby": "admin-runs-title" },
      h("h2", { id: "admin-runs-title" }, "Every user's runs"),
      h("p", { class: "muted" }, "Each list and each run you open here is written to the audit log with your name."),
      form,
      error,
      position,
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "admin", id: "admin-runs" },
          h("caption", { class: "visually-hidden" }, "The tenant's runs, newest first"),
          h("thead", {}, h("tr", {}, ...["Run", "User", "State", "Error", "Created"].map((c) => h("th", { scope: "col" }, c)))),
          body,
        ),
      ),
      h("nav", { class: "pager", "aria-label": "Run list pages" }, previous, " ", next),
    ),
  );
  void load(1);
  return () => {
    left = true;
  };
}

function row(r: AdminRun): HTMLTableRowElement {
  return h(
    "tr",
    { "data-run": r.id },
    h("td", {}, h("a", { href: `#/admin/runs/${r.id}`, title: r.input }, r.id.slice(0, 8)), h("div", { class: "muted clip" }, r.input)),
    h("td", {}, r.created_by),
    h("td", {}, h("span", { class: `state state-${r.state}` }, r.state.replace("_", " "))),
    h("td", {}, r.error ? String(r.error.code) : ""),
    h("td", {}, when(r.created_at)),
  );
}
