import { mcpSessions, type McpSession, type McpSessionFilter } from "../admin-api";
import { when } from "../admin-page";
import { h } from "../dom";
import { shortId } from "../format";
import { renderPagedList } from "../paged-list";

const PAGE_SIZE = 50;
const MODES = ["", "observe", "execute", "admin"];

/**
 * The tenant's MCP sessions (docs/mcp.md), newest first: who opened each, in which mode, when it opened, and when
 * and why it closed. Each links to the decision log filtered by that session: what the session did.
 */
export function renderMcpSessions(main: HTMLElement): () => void {
  const user = h("input", { id: "mcp-session-user", type: "search", autocomplete: "off", spellcheck: "false" });
  const mode = h("select", { id: "mcp-session-mode" }, ...MODES.map((m) => h("option", { value: m }, m || "any")));
  const openOnly = h("input", { id: "mcp-session-open", type: "checkbox" });
  const filter = (): McpSessionFilter => ({
    ...(user.value.trim() ? { user_id: user.value.trim() } : {}),
    ...(mode.value ? { mode: mode.value } : {}),
    ...(openOnly.checked ? { open: "true" as const } : {}),
  });
  return renderPagedList(main, {
    id: "mcp-sessions",
    title: "MCP sessions",
    heading: "Sessions of MCP clients",
    intro: "External agents connected at /mcp: who, in which mode, and when and why each session ended. A session's decisions show what it did.",
    caption: "The tenant's MCP sessions, newest first",
    columns: ["Session", "User", "Mode", "Opened", "Closed"],
    noun: "Sessions",
    none: "No MCP sessions match.",
    pagerLabel: "MCP session pages",
    unreadable: "The MCP sessions could not be read",
    filters: [
      ["User", user],
      ["Mode", mode],
      ["Open only", openOnly],
    ],
    fetch: (page) => mcpSessions(filter(), page, PAGE_SIZE),
    row,
  });
}

function row(s: McpSession): HTMLTableRowElement {
  return h(
    "tr",
    { "data-session": s.id, "data-open": s.closed_at ? "false" : "true" },
    h(
      "td",
      {},
      h(
        "a",
        { href: `#/admin/decisions/mcp-session/${encodeURIComponent(s.id)}`, title: s.id, "aria-label": `Decisions of session ${shortId(s.id)}` },
        shortId(s.id),
      ),
    ),
    h("td", {}, s.user_id),
    h("td", {}, s.mode),
    h("td", {}, when(s.opened_at)),
    h(
      "td",
      { class: "wrap" },
      ...(s.closed_at ? [when(s.closed_at), h("div", { class: "muted mcp-close-reason" }, s.close_reason ?? "")] : [h("span", { class: "ok" }, "open")]),
    ),
  );
}
