import { append, h } from "./dom";
import type { RunEvent } from "./events";
import type { Evidence } from "./api";
import { prettyArguments, str } from "./format";
import { renderMarkdown } from "./markdown";

/** The evidence of an answer or a tool result: title, document id, score and the quoted snippet. */
export function evidenceList(evidence: unknown): HTMLElement | null {
  if (!Array.isArray(evidence) || evidence.length === 0) return null;
  return h(
    "ol",
    { class: "evidence", "aria-label": "Evidence" },
    ...(evidence as Evidence[]).map((e) =>
      h(
        "li",
        {},
        // The document itself is one click away (GET /v1/knowledge/documents/{id}, for anyone who may read the
        // knowledge base); its id is shown whole too.
        e.document_id
          ? h("a", { class: "evidence-link", href: `#/knowledge/${encodeURIComponent(str(e.document_id))}` }, h("strong", {}, e.title || "untitled"))
          : h("strong", {}, e.title || "untitled"),
        " ",
        h(
          "span",
          { class: "muted" },
          "document ",
          h("code", { class: "document-id" }, str(e.document_id)),
          typeof e.score === "number" ? `, score ${e.score.toFixed(2)}` : "",
        ),
        e.snippet ? h("blockquote", {}, e.snippet) : null,
      ),
    ),
  );
}

function item(kind: string, label: string, ...body: (Node | string | null)[]): HTMLLIElement {
  return h("li", { class: `event event-${kind}`, "data-type": label }, h("span", { class: "event-label" }, label), h("div", { class: "event-body" }, ...body));
}

const code = (text: string) => h("pre", { class: "args" }, h("code", {}, text));

/**
 * The live timeline of a run: one list item per event, model deltas streamed into the message being written,
 * the final answer rendered as Markdown with its evidence. Returns the list and a function taking each event.
 */
export function createTimeline(): { element: HTMLOListElement; add(event: RunEvent): void } {
  const element = h("ol", { class: "timeline", "aria-label": "Run events" });
  /** The message being written, by step: deltas land here until its `message` event. */
  const writing = new Map<string, HTMLElement>();

  const push = (li: HTMLLIElement) => element.appendChild(li);

  function add(event: RunEvent): void {
    const d = event.data;
    switch (event.type) {
      case "run.queued":
        return void push(item("info", "queued", `${str(d.mode) || "agent"} mode: `, h("q", {}, str(d.input))));
      case "run.started":
        return void push(item("info", "started", `on ${str(d.runner_id) || "a runner"}`));
      case "thought":
        return void (str(d.text).trim() ? push(item("thought", "thought", str(d.text))) : undefined);
      case "tool_call":
        return void push(item("tool", "tool call", h("strong", {}, str(d.tool_name)), code(prettyArguments(d.arguments))));
      case "tool.decided": {
        const ids = Array.isArray(d.policy_ids) && d.policy_ids.length ? `by ${d.policy_ids.join(", ")}` : "";
        const verdict = d.permit ? h("span", { class: "ok" }, "permit") : h("span", { class: "bad" }, `deny ${str(d.code)}`);
        return void push(item("policy", "policy", `${str(d.policy_point)}: `, verdict, ids ? ` ${ids}` : ""));
      }
      case "tool_result": {
        const ok = str(d.result_code) === "ok";
        const result = d.result === undefined || d.result === null ? null : code(typeof d.result === "string" ? d.result : JSON.stringify(d.result, null, 2));
        return void push(
          item(
            "result",
            "tool result",
            h("strong", {}, str(d.tool_name)),
            ": ",
            h("span", { class: ok ? "ok" : "warn" }, str(d.result_code)),
            result,
            evidenceList(d.evidence),
          ),
        );
      }
      case "ask_user": {
        const options = Array.isArray(d.options) && d.options.length ? h("ul", {}, ...d.options.map((o) => h("li", {}, str(o)))) : null;
        return void push(item("ask", "question", h("strong", {}, str(d.question)), options));
      }
      case "input.received":
        return void push(item("info", "answered", str(d.answer)));
      case "confirmation_required":
        return void push(item("ask", "approval needed", h("strong", {}, str(d.tool_name)), code(prettyArguments(d.arguments))));
      case "confirmation.decided":
        // The channel the person decided through (recorded since channels are; docs/security.md).
        return void push(
          item(
            "info",
            d.decision === "approve" ? "approved" : "rejected",
            str(d.call_id),
            d.channel ? h("span", { class: "muted" }, ` via ${str(d.channel)}`) : null,
          ),
        );
      case "knowledge.proposed":
        // Queued for review: it is used only once a person applies it (Knowledge proposals).
        return void push(
          item(
            "info",
            "knowledge proposed",
            h("strong", {}, str(d.title)),
            " ",
            h("span", { class: "muted" }, "pending review, proposal ", h("code", {}, str(d.proposal_id))),
          ),
        );
      case "circuit.opened":
        return void push(item("warn", "circuit open", `${str(d.tool_name)} failed ${str(d.failures)} times in a row`));
      case "provider.fallback":
        return void push(item("warn", "fallback", `model provider ${str(d.from)} failed; ${str(d.to)} answers`));
      case "message.delta": {
        const step = str(d.step_no);
        let target = writing.get(step);
        if (!target) {
          target = h("div", { class: "writing", "aria-live": "off" });
          writing.set(step, target);
          push(item("message", "writing", target));
        }
        append(target, str(d.delta));
        return;
      }
      case "message": {
        const step = str(d.step_no);
        const streamed = writing.get(step);
        const rendered = h("div", { class: "markdown" }, renderMarkdown(str(d.text)));
        if (streamed) {
          const li = streamed.closest("li");
          streamed.replaceWith(rendered);
          li?.querySelector(".event-label")?.replaceChildren("message");
          li?.setAttribute("data-type", "message");
          writing.delete(step);
        } else push(item("message", "message", rendered));
        return;
      }
      case "message.truncated": {
        // The model stopped at its output limit: its text so far is kept and it is asked to continue, so the
        // deltas that follow belong to a new message.
        const step = str(d.step_no);
        const rendered = h("div", { class: "markdown" }, renderMarkdown(str(d.text)));
        const note = h("p", { class: "muted" }, `output limit reached; continuation ${str(d.continuation)} of 2 asked`);
        const streamed = writing.get(step);
        writing.delete(step);
        if (streamed) streamed.closest("li")?.remove();
        return void push(item("warn", "truncated", note, rendered));
      }
      case "context.compacted": {
        const calls = Array.isArray(d.call_ids) ? d.call_ids.length : 0;
        return void push(
          item(
            "warn",
            "compacted",
            `${calls} older tool result${calls === 1 ? "" : "s"} shortened to fit the model's window: ${str(d.tokens_before)} → ${str(d.tokens_after)} tokens`,
          ),
        );
      }
      case "run.cancel_requested":
        return void push(item("info", "cancel requested", ""));
      case "run.succeeded": {
        const output = (d.output ?? {}) as { text?: unknown; evidence?: unknown };
        return void push(item("end", "succeeded", h("div", { class: "markdown answer" }, renderMarkdown(str(output.text))), evidenceList(output.evidence)));
      }
      case "run.failed":
      case "run.cancelled": {
        const e = (d.error ?? {}) as Record<string, unknown>;
        const label = event.type === "run.failed" ? "failed" : "cancelled";
        return void push(item("bad", label, e.code ? `${str(e.code)} ${str(e.message)}` : ""));
      }
      case "iteration_limit":
        return void push(item("warn", "step budget spent", `the limit is ${str(d.limit)} steps`));
      case "error":
        return; // the run.failed that follows says the same
      default:
        return void push(item("info", event.type, Object.keys(d).length ? code(JSON.stringify(d, null, 2)) : null));
    }
  }
  return { element, add };
}
