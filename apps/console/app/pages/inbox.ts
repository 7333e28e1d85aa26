import type { EventPage, StoredEventView } from "@steward/contract";
import { api, ApiError, runs, type RunPage, type RunSnapshot } from "../api";
import { announce, h, replace } from "../dom";
import { prettyArguments, shortId, since, str } from "../format";

/** How often the inbox looks again while it is shown. */
const POLL_MS = 4000;
/** The runs read per look: GET /v1/agents/runs serves at most 100 a page; 10 pages bound the work. */
const PAGE_SIZE = 100;
const MAX_PAGES = 10;
const EVENTS_PAGE = 1000;

type StoredEvent = StoredEventView;

/** One tool call waiting for the caller's decision. */
interface Pending {
  readonly run: RunSnapshot;
  readonly request: StoredEvent;
  /** The PDP's decision on this call, when one was recorded (normally none yet: the PDP decides when it runs). */
  readonly decided: StoredEvent | undefined;
}

const keyOf = (p: Pending) => `${p.run.id}/${str(p.request.data.call_id)}/${str(p.request.data.fingerprint)}`;

/**
 * The caller's own runs, newest first, up to MAX_PAGES pages. SPEC forbids extra query keys on this route, so
 * there is no server-side state filter: the waiting ones are picked here.
 */
async function listRuns(): Promise<{ items: RunSnapshot[]; more: boolean }> {
  const items: RunSnapshot[] = [];
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const got = await api<RunPage>("GET", `/v1/agents/runs?page=${page}&page_size=${PAGE_SIZE}`);
    items.push(...got.items);
    if (got.items.length < PAGE_SIZE || items.length >= got.total) return { items, more: false };
  }
  return { items, more: true };
}

/** A run's stored events, read once and then only after the last one seen. */
function eventReader() {
  const cache = new Map<string, StoredEvent[]>();
  return {
    async read(id: string): Promise<StoredEvent[]> {
      const known = cache.get(id) ?? [];
      let after = known.length ? known[known.length - 1].seq : 0;
      const events = [...known];
      for (;;) {
        const page = await api<EventPage>("GET", `/v1/agents/runs/${encodeURIComponent(id)}/events?after=${after}&limit=${EVENTS_PAGE}`);
        events.push(...page.items);
        after = page.next_after;
        if (!page.has_more || page.items.length === 0) break;
      }
      cache.set(id, events);
      return events;
    },
    /** Forgets the runs no longer waiting. */
    keep(ids: ReadonlySet<string>): void {
      for (const id of cache.keys()) if (!ids.has(id)) cache.delete(id);
    },
  };
}

/** The confirmation a run waits for: its latest confirmation_required that no confirmation.decided answered. */
function pendingOf(run: RunSnapshot, events: readonly StoredEvent[]): Pending | null {
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const e = events[i];
    if (e.type !== "confirmation_required") continue;
    const callId = str(e.data.call_id);
    const answered = events.slice(i + 1).some((x) => x.type === "confirmation.decided" && str(x.data.call_id) === callId);
    if (answered) return null;
    const decided = events.find((x) => x.type === "tool.decided" && str(x.data.call_id) === callId);
    return { run, request: e, decided };
  }
  return null;
}

/**
 * The approvals inbox: every tool call waiting for this user's decision across their runs, each with exactly
 * what approving runs and the fingerprint of that call, decided here without opening the run.
 */
export function renderInbox(main: HTMLElement): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** One look at a time: a look asked for during another runs right after it. */
  let looking = false;
  let lookAgain = false;
  const reader = eventReader();
  /** The drawn items by call: kept across looks so that focus and a decision in progress survive a refresh. */
  const drawn = new Map<string, HTMLLIElement>();
  /** Calls decided here: not drawn again even if a look started before the decision still lists them. */
  const decidedHere = new Set<string>();
  const status = h("p", { class: "muted", id: "inbox-status", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  const list = h("ul", { class: "inbox", "aria-label": "Waiting for your decision" });
  const empty = h("p", { class: "empty", id: "inbox-empty", hidden: true }, "Nothing is waiting for you");

  function item(p: Pending, key: string): HTMLLIElement {
    const d = p.request.data;
    const fingerprint = typeof d.fingerprint === "string" && d.fingerprint ? d.fingerprint : undefined;
    const titleId = `inbox-${p.run.id}-${str(d.call_id)}`.replace(/[^\w-]/g, "_");
    const message = h("p", { class: "error", role: "alert" });
    const buttons: HTMLButtonElement[] = [];
    const decide = async (decision: "approve" | "reject") => {
      message.textContent = "";
      buttons.forEach((b) => (b.disabled = true));
      try {
        await runs.decide(p.run.id, decision, fingerprint);
        decidedHere.add(key);
        li.remove();
        drawn.delete(key);
        announce(`${decision === "approve" ? "approved" : "rejected"}: ${str(d.tool_name)}`);
        showCount();
      } catch (err) {
        buttons.forEach((b) => (b.disabled = false));
        // 409: the run no longer waits for this call (decided elsewhere, cancelled, or another call waits).
        message.textContent =
          err instanceof ApiError && err.status === 409
            ? `${err.message} — the list is being refreshed`
            : err instanceof Error
              ? err.message
              : "the decision failed";
        if (err instanceof ApiError && err.status === 409) void look();
      }
    };
    const button = (label: string, decision: "approve" | "reject", cls?: string) => {
      const b = h("button", { type: "button", class: cls, "aria-describedby": titleId, onclick: () => void decide(decision) }, label);
      buttons.push(b);
      return b;
    };
    const why = p.decided
      ? `policy ${str(p.decided.data.policy_point)}: ${p.decided.data.permit ? "permit" : `deny ${str(p.decided.data.code)}`}${Array.isArray(p.decided.data.policy_ids) && p.decided.data.policy_ids.length ? ` by ${p.decided.data.policy_ids.join(", ")}` : ""}`
      : "the tool is marked RequireConfirmation: it never runs without a person's approval (the policy decision is made when it runs)";
    const li = h(
      "li",
      { class: "card inbox-item", "data-run": p.run.id, "data-call": str(d.call_id) },
      h(
        "h2",
        { id: titleId },
        h("span", { class: "inbox-tool" }, str(d.tool_name)),
        " ",
        h("span", { class: "muted" }, `step ${str(d.step_no)}, asked ${since(p.request.recorded_at)}`),
      ),
      h(
        "p",
        {},
        "Run ",
        h("a", { href: `#/runs/${encodeURIComponent(p.run.id)}` }, h("code", {}, shortId(p.run.id))),
        ": ",
        h("q", { class: "inbox-input" }, p.run.input),
      ),
      h("p", {}, "Approving runs exactly this call:"),
      h("pre", { class: "args inbox-arguments" }, h("code", {}, prettyArguments(d.arguments))),
      h("p", { class: "muted" }, "Why it waits: ", why),
      fingerprint
        ? h("p", { class: "muted" }, "Fingerprint ", h("code", { class: "inbox-fingerprint", title: fingerprint }, fingerprint.slice(0, 16)), "…")
        : null,
      h("div", { class: "inbox-buttons" }, button("Approve", "approve"), " ", button("Reject", "reject", "secondary")),
      message,
    );
    return li;
  }

  function showCount(): void {
    const n = drawn.size;
    empty.hidden = n > 0;
    list.hidden = n === 0;
    status.dataset.count = String(n);
  }

  async function look(): Promise<void> {
    if (looking) {
      lookAgain = true;
      return;
    }
    looking = true;
    clearTimeout(timer);
    try {
      const { items, more } = await listRuns();
      const waiting = items.filter((r) => r.state === "awaiting_confirmation");
      reader.keep(new Set(waiting.map((r) => r.id)));
      const found = (await Promise.all(waiting.map(async (r) => pendingOf(r, await reader.read(r.id))))).filter((p): p is Pending => p !== null);
      if (stopped) return;
      const keys = new Set<string>();
      for (const p of found) {
        const key = keyOf(p);
        if (decidedHere.has(key)) continue;
        keys.add(key);
        if (!drawn.has(key)) {
          const li = item(p, key);
          drawn.set(key, li);
          list.appendChild(li);
        }
      }
      for (const [key, li] of drawn) {
        if (!keys.has(key) && !li.contains(document.activeElement)) {
          li.remove();
          drawn.delete(key);
        }
      }
      // Newest run first, like the runs list (moving nodes, not redrawing them, keeps focus where it is).
      for (const p of found) {
        const li = drawn.get(keyOf(p));
        if (li) list.appendChild(li);
      }
      showCount();
      error.textContent = "";
      status.textContent = `${waiting.length} of your ${items.length}${more ? " newest" : ""} runs wait for approval${more ? ` (only the newest ${MAX_PAGES * PAGE_SIZE} runs are looked at)` : ""}; looked ${new Date().toLocaleTimeString()}`;
    } catch (err) {
      error.textContent = err instanceof ApiError ? err.message : "the waiting calls could not be read";
    }
    looking = false;
    if (stopped) return;
    if (lookAgain) {
      lookAgain = false;
      return void look();
    }
    timer = setTimeout(() => void look(), POLL_MS);
  }

  replace(
    main,
    h("h1", {}, "Approvals"),
    h(
      "p",
      { class: "muted" },
      "Tool calls in your runs that wait for your decision. Approving runs exactly the call shown; rejecting tells the model it was refused.",
    ),
    status,
    error,
    empty,
    list,
  );
  list.hidden = true;
  status.textContent = "Looking for calls waiting for you…";
  void look();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
