import { decisions, type Decision } from "../admin-api";
import { failure, showNotAllowed, when } from "../admin-page";
import { announce, h, replace } from "../dom";
import { shortId } from "../format";

const SIZES = ["25", "50", "100"];
/** The largest page the route gives (its `limit`): used to walk to the newest records. */
const WALK = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The decision log. The route pages oldest first after a record id and filters by run and MCP session, so the page keeps
 * the ids it has passed: any earlier page's cursor is the id just before it, and "Newest" walks to the end in
 * pages of 1000 (the log is read once, ids only kept). It opens on the newest records.
 */
export function renderDecisions(main: HTMLElement, initial: { readonly mcpSessionId?: string } = {}): () => void {
  let left = false;
  /** Every record id from the start of the log (for the current filter) up to the furthest page read. */
  let ids: number[] = [];
  /** The index in `ids` of the first record shown. */
  let start = 0;
  let shown: Decision[] = [];
  let atEnd = false;
  /** Bumped by every navigation: an answer for an earlier one (a click before the last finished) is dropped. */
  let generation = 0;
  /** The API refused the caller: the page says "Not allowed" and nothing else. */
  let refused = false;

  const runFilter = h("input", { id: "decision-run", type: "search", placeholder: "a run id", autocomplete: "off", spellcheck: "false" });
  const sessionFilter = h("input", { id: "decision-session", type: "search", placeholder: "an MCP session id", autocomplete: "off", spellcheck: "false" });
  sessionFilter.value = initial.mcpSessionId ?? "";
  const size = h("select", { id: "decision-size" }, ...SIZES.map((s) => h("option", { value: s }, s)));
  size.value = "50";
  const body = h("tbody");
  const position = h("p", { class: "muted", id: "decision-position", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  const first = h("button", { type: "button", class: "secondary", onclick: () => void go(0) }, "Oldest");
  const previous = h("button", { type: "button", class: "secondary", onclick: () => void go(Math.max(0, start - limit())) }, "← Previous");
  const next = h("button", { type: "button", class: "secondary", onclick: () => void go(start + shown.length) }, "Next →");
  const newest = h("button", { type: "button", class: "secondary", onclick: () => void toNewest() }, "Newest");
  const limit = () => Number(size.value);
  /** The filters as last applied (editing a field changes nothing until Apply). */
  let applied = "";
  let appliedSession = initial.mcpSessionId && UUID.test(initial.mcpSessionId) ? initial.mcpSessionId : "";
  const runId = () => applied;
  const sessionId = () => appliedSession;
  /** What the filters name, for the position line: ", run …, MCP session …". */
  const naming = () => `${runId() ? `, run ${runId()}` : ""}${sessionId() ? `, MCP session ${sessionId()}` : ""}`;

  /** Reads one page from index `from` (known, or the end of what is known), remembering the ids it brings. */
  async function read(from: number, count: number, asked: number): Promise<Decision[] | undefined> {
    const page = await decisions({ after: from === 0 ? 0 : ids[from - 1], limit: count, runId: runId() || undefined, mcpSessionId: sessionId() || undefined });
    if (asked !== generation) return undefined;
    ids.splice(from, page.items.length, ...page.items.map((d) => d.id));
    return page.items;
  }

  async function go(from: number, asked = ++generation): Promise<void> {
    error.textContent = "";
    try {
      const got = await read(from, limit(), asked);
      if (!got) return;
      shown = got;
      start = from;
      atEnd = shown.length < limit();
      draw();
    } catch (err) {
      fail(err);
    }
  }

  const fail = (err: unknown) => {
    if (showNotAllowed(main, err)) refused = true;
    else error.textContent = failure(err, "The decision log could not be read");
  };

  async function toNewest(): Promise<void> {
    error.textContent = "";
    const asked = ++generation;
    try {
      // Walk from what is known to the end, then show the last page's worth.
      for (;;) {
        const got = await read(ids.length, WALK, asked);
        if (!got || left) return;
        if (got.length < WALK) break;
      }
      await go(Math.max(0, ids.length - limit()), asked);
    } catch (err) {
      fail(err);
    }
  }

  function draw(): void {
    if (left || refused) return;
    replace(body, ...shown.map(row));
    position.textContent = shown.length
      ? `Decisions ${start + 1}–${start + shown.length}${atEnd ? ` of ${start + shown.length}` : ""}, oldest first${naming()}`
      : `No decisions${naming() ? ` for${naming().slice(1)}` : ""}${start > 0 ? " after these" : ""}.`;
    first.disabled = previous.disabled = start === 0;
    next.disabled = atEnd;
    announce(position.textContent);
  }

  const filters = h(
    "form",
    {
      class: "row",
      role: "search",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const wanted = runFilter.value.trim().toLowerCase();
        const session = sessionFilter.value.trim().toLowerCase();
        if ((wanted && !UUID.test(wanted)) || (session && !UUID.test(session))) {
          error.textContent = `${wanted && !UUID.test(wanted) ? "A run id" : "An MCP session id"} is a UUID (36 characters, e.g. 0b6f…-…).`;
          return;
        }
        applied = wanted;
        appliedSession = session;
        ids = [];
        void toNewest();
      },
    },
    h("div", {}, h("label", { for: "decision-run" }, "Run id"), runFilter),
    h("div", {}, h("label", { for: "decision-session" }, "MCP session"), sessionFilter),
    h("div", {}, h("label", { for: "decision-size" }, "Per page"), size),
    h("div", { class: "filter-go" }, h("button", { type: "submit" }, "Apply")),
  );

  const layout = () =>
    replace(
      main,
      h("h1", {}, "Decisions"),
      h(
        "section",
        { class: "card", "aria-labelledby": "decisions-title" },
        h("h2", { id: "decisions-title" }, "Decision log"),
        h("p", { class: "muted" }, "Every policy decision of the tenant: routes and tool calls, with the policies that decided."),
        filters,
        error,
        position,
        h(
          "div",
          { class: "scroll" },
          h(
            "table",
            { class: "admin", id: "decisions" },
            h("caption", { class: "visually-hidden" }, "Policy decisions, oldest first"),
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ...["Time", "User", "Action", "Resource", "Effect", "Policies", "Code", "Run", "MCP session"].map((c) => h("th", { scope: "col" }, c)),
              ),
            ),
            body,
          ),
        ),
        h("nav", { class: "pager", "aria-label": "Decision log pages" }, first, " ", previous, " ", next, " ", newest),
      ),
    );
  replace(main, h("p", { class: "muted" }, "Reading the decision log…"));
  void toNewest().then(() => {
    if (!left && !refused) layout();
  });
  return () => {
    left = true;
  };
}

function row(d: Decision): HTMLTableRowElement {
  return h(
    "tr",
    { "data-decision": String(d.id), "data-effect": d.permit ? "permit" : "deny" },
    h("td", {}, when(d.decided_at)),
    h("td", {}, d.user_id),
    h("td", {}, h("code", {}, d.action)),
    h("td", { class: "wrap" }, `${d.resource.type}/${d.resource.id}`),
    h("td", {}, d.permit ? h("span", { class: "ok" }, "permit") : h("span", { class: "bad" }, "deny")),
    h("td", { class: "wrap" }, d.policy_ids.join(", ") || "none", d.policy_version ? h("div", { class: "muted" }, `version ${d.policy_version}`) : null),
    h("td", {}, d.code ?? ""),
    h(
      "td",
      {},
      d.run_id ? h("a", { href: `#/runs/${encodeURIComponent(d.run_id)}`, title: d.run_id }, shortId(d.run_id)) : "",
      d.run_id && d.step_no ? h("div", { class: "muted" }, `step ${d.step_no}`) : null,
    ),
    h(
      "td",
      { class: "decision-session" },
      d.mcp_session_id
        ? h("a", { href: `#/admin/decisions/mcp-session/${encodeURIComponent(d.mcp_session_id)}`, title: d.mcp_session_id }, shortId(d.mcp_session_id))
        : "",
      d.mcp_session_id && d.mcp_mode ? h("div", { class: "muted" }, d.mcp_mode) : null,
    ),
  );
}
