import { when } from "../admin-page";
import { adminRuns, type AdminRun, type AdminRunFilter } from "../conversation-api";
import { h } from "../dom";
import { shortId } from "../format";
import { renderPagedList } from "../paged-list";

const STATES = ["", "queued", "running", "awaiting_input", "awaiting_confirmation", "succeeded", "failed", "cancelled"];

/** Every user's runs of the tenant, for administrators; each read is written to the audit log by the gateway. */
export function renderAdminRuns(main: HTMLElement): () => void {
  const user = h("input", { id: "admin-run-user", type: "search", autocomplete: "off", spellcheck: "false" });
  const state = h("select", { id: "admin-run-state" }, ...STATES.map((s) => h("option", { value: s }, s || "any")));
  const code = h("input", { id: "admin-run-code", type: "search", autocomplete: "off", placeholder: "e.g. 60405" });
  const filter = (): AdminRunFilter => ({
    ...(user.value.trim() ? { user: user.value.trim() } : {}),
    ...(state.value ? { state: state.value } : {}),
    ...(code.value.trim() ? { code: code.value.trim() } : {}),
  });
  return renderPagedList(main, {
    id: "admin-runs",
    title: "All runs",
    heading: "Every user's runs",
    intro: "Each list and each run you open here is written to the audit log with your name.",
    caption: "The tenant's runs, newest first",
    columns: ["Run", "User", "State", "Error", "Created"],
    noun: "Runs",
    none: "No runs match.",
    pagerLabel: "Run list pages",
    unreadable: "The runs could not be read",
    filters: [
      ["User", user],
      ["State", state],
      ["Error code", code],
    ],
    fetch: (page) => adminRuns.list(filter(), page),
    row,
  });
}

function row(r: AdminRun): HTMLTableRowElement {
  return h(
    "tr",
    { "data-run": r.id },
    h("td", {}, h("a", { href: `#/admin/runs/${r.id}`, title: r.input }, shortId(r.id)), h("div", { class: "muted clip" }, r.input)),
    h("td", {}, r.created_by),
    h("td", {}, h("span", { class: `state state-${r.state}` }, r.state.replace("_", " "))),
    h("td", {}, r.error ? String(r.error.code) : ""),
    h("td", {}, when(r.created_at)),
  );
}
