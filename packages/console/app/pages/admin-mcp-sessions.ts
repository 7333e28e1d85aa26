import { mcpSessions, type McpSession, type McpSessionFilter } from "../admin-api";
import { failure, showNotAllowed, when } from "../admin-page";
import { announce, h, replace } from "../dom";

const PAGE_SIZE = 50;
const MODES = ["", "observe", "execute", "admin"];

/**
 * The tenant's MCP sessions (docs/mcp.md), newest first: who opened each, in which mode, when it opened, and when
 * and why it closed. Each links to the decision log filtered by that session: what the session did.
 */
export function renderMcpSessions(main: HTMLElement): () => void {
  let left = false;
  let page = 1;
  const user = h("input", { id: "mcp-session-user", type: "search", autocomplete: "off", spellcheck: "false" });
  const mode = h("select", { id: "mcp-session-mode" }, ...MODES.map((m) => h("option", { value: m }, m || "any")));
  const openOnly = h("input", { id: "mcp-session-open", type: "checkbox" });
  const body = h("tbody");
  const position = h("p", { class: "muted", id: "mcp-sessions-position", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  const previous = h("button", { type: "button", class: "secondary", onclick: () => void load(page - 1) }, "← Previous");
  const next = h("button", { type: "button", class: "secondary", onclick: () => void load(page + 1) }, "Next →");

  const filter = (): McpSessionFilter => ({
    ...(user.value.trim() ? { user_id: user.value.trim() } : {}),
    ...(mode.value ? { mode: mode.value } : {}),
    ...(openOnly.checked ? { open: "true" as const } : {}),
  });

  async function load(wanted: number): Promise<void> {
    error.textContent = "";
    try {
      const got = await mcpSessions(filter(), wanted, PAGE_SIZE);
      if (left) return;
      page = got.page;
      replace(body, ...got.items.map(row));
      const from = (page - 1) * got.page_size;
      position.textContent = got.total ? `Sessions ${from + 1}–${from + got.items.length} of ${got.total}, newest first` : "No MCP sessions match.";
      previous.disabled = page <= 1;
      next.disabled = page * got.page_size >= got.total;
      announce(position.textContent);
    } catch (err) {
      if (!showNotAllowed(main, err)) error.textContent = failure(err, "The MCP sessions could not be read");
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
    h("div", {}, h("label", { for: "mcp-session-user" }, "User"), user),
    h("div", {}, h("label", { for: "mcp-session-mode" }, "Mode"), mode),
    h("div", {}, h("label", { for: "mcp-session-open" }, "Open only"), openOnly),
    h("div", { class: "filter-go" }, h("button", { type: "submit" }, "Apply")),
  );

  replace(
    main,
    h("h1", {}, "MCP sessions"),
    h(
      "section",
      { class: "card", "aria-labelledby": "mcp-sessions-title" },
      h("h2", { id: "mcp-sessions-title" }, "Sessions of MCP clients"),
      h("p", { class: "muted" }, "External agents connected at /mcp: who, in which mode, and when and why each session ended. A session's decisions show what it did."),
      form,
      error,
      position,
      h(
        "div",
        { class: "scroll" },
        h(
          "table",
          { class: "admin", id: "mcp-sessions" },
          h("caption", { class: "visually-hidden" }, "The tenant's MCP sessions, newest first"),
          h("thead", {}, h("tr", {}, ...["Session", "User", "Mode", "Opened", "Closed"].map((c) => h("th", { scope: "col" }, c)))),
          body,
        ),
      ),
      h("nav", { class: "pager", "aria-label": "MCP session pages" }, previous, " ", next),
    ),
  );
  void load(1);
  return () => {
    left = true;
  };
}

function row(s: McpSession): HTMLTableRowElement {
  return h(
    "tr",
    { "data-session": s.id, "data-open": s.closed_at ? "false" : "true" },
    h(
      "td",
      {},
      h("a", { href: `#/admin/decisions/mcp-session/${encodeURIComponent(s.id)}`, title: s.id, "aria-label": `Decisions of session ${s.id.slice(0, 8)}` }, s.id.slice(0, 8)),
    ),
    h("td", {}, s.user_id),
    h("td", {}, s.mode),
    h("td", {}, when(s.opened_at)),
    h("td", { class: "wrap" }, ...(s.closed_at ? [when(s.closed_at), h("div", { class: "muted mcp-close-reason" }, s.close_reason ?? "")] : [h("span", { class: "ok" }, "open")])),
  );
}
