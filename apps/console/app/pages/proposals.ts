import { ApiError } from "../api";
import { proposals, type Proposal } from "../conversation-api";
import { announce, h, replace } from "../dom";
import { shortId, since } from "../format";

const STATES = ["pending", "applied", "dismissed", "all"];

/**
 * Knowledge the agent proposed, waiting for a person: apply (it becomes a knowledge document the next runs can
 * find) or dismiss. Members see their own runs' proposals; "whole tenant" asks for every one (administrators).
 */
export function renderProposals(main: HTMLElement): () => void {
  let left = false;
  const status = h("p", { class: "muted", id: "proposals-status", "aria-live": "polite" });
  const error = h("p", { class: "error", role: "alert" });
  const state = h("select", { id: "proposal-state" }, ...STATES.map((s) => h("option", { value: s }, s)));
  const tenant = h("input", { id: "proposal-tenant", type: "checkbox", class: "check" });
  const list = h("ul", { class: "inbox", id: "proposals", "aria-label": "Knowledge proposals" });

  const decide = async (p: Proposal, how: "apply" | "dismiss", li: HTMLElement) => {
    error.textContent = "";
    try {
      const decided = how === "apply" ? await proposals.apply(p.id) : await proposals.dismiss(p.id);
      li.replaceWith(item(decided));
      announce(`${decided.title}: ${decided.status}`);
    } catch (err) {
      error.textContent =
        err instanceof ApiError ? `The proposal could not be ${how === "apply" ? "applied" : "dismissed"}: ${err.message}` : "It did not happen.";
    }
  };

  function item(p: Proposal): HTMLLIElement {
    const li = h(
      "li",
      { "data-proposal": p.id, "data-status": p.status },
      h("h3", {}, p.title),
      h("p", { class: "wrap" }, p.content),
      p.evidence_quote ? h("blockquote", {}, p.evidence_quote) : null,
      h(
        "p",
        { class: "muted" },
        `proposed ${since(p.created_at)} by ${p.proposed_by} in `,
        h("a", { href: `#/runs/${p.run_id}` }, `run ${shortId(p.run_id)}`),
        `, step ${p.step_no}`,
        p.thread_id ? h("span", {}, " · ", h("a", { href: `#/threads/${p.thread_id}` }, "its thread")) : null,
      ),
    );
    if (p.status === "pending") {
      li.append(
        h("button", { type: "button", "data-apply": p.id, onclick: () => void decide(p, "apply", li) }, "Apply"),
        " ",
        h("button", { type: "button", class: "secondary", "data-dismiss": p.id, onclick: () => void decide(p, "dismiss", li) }, "Dismiss"),
      );
    } else {
      li.append(
        h(
          "p",
          {},
          h("span", { class: p.status === "applied" ? "ok" : "muted" }, p.status),
          p.decided_by ? ` by ${p.decided_by}` : "",
          p.document_id ? h("span", {}, " · ", h("a", { href: `#/knowledge/${p.document_id}` }, "the document")) : null,
        ),
      );
    }
    return li;
  }

  const refresh = async () => {
    error.textContent = "";
    try {
      const page = await proposals.list({ status: state.value === "all" ? undefined : state.value, tenant: tenant.checked });
      if (left) return;
      replace(list, ...page.items.map(item));
      status.textContent = page.total === 0 ? "No proposals." : `${page.items.length} of ${page.total} proposals shown`;
    } catch (err) {
      status.textContent = "";
      error.textContent = err instanceof ApiError ? `The proposals could not be read: ${err.message}` : "The proposals could not be read.";
    }
  };
  state.addEventListener("change", () => void refresh());
  tenant.addEventListener("change", () => void refresh());

  replace(
    main,
    h("h1", {}, "Proposals"),
    h(
      "section",
      { class: "card", "aria-labelledby": "proposals-title" },
      h("h2", { id: "proposals-title" }, "Knowledge the agent proposed"),
      h("p", { class: "muted" }, "Nothing proposed is used until a person applies it."),
      h("div", { class: "row" }, h("div", {}, h("label", { for: "proposal-state" }, "Status"), state)),
      h("p", {}, h("label", { class: "inline" }, tenant, " The whole tenant's (administrators)")),
      status,
      error,
      list,
    ),
  );
  void refresh();
  return () => {
    left = true;
  };
}
