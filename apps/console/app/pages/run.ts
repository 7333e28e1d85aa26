import { ApiError, runs, TERMINAL_STATES, type RunSnapshot } from "../api";
import { announce, h, replace } from "../dom";
import { eventOf, TERMINAL_EVENTS, type RunEvent } from "../events";
import { duration, prettyArguments, runDuration, since, str } from "../format";
import { currentToken } from "../session";
import { followEvents } from "../sse";
import { createTimeline, evidenceList } from "../timeline";
import { renderMarkdown } from "../markdown";
import { waterfallOf } from "../waterfall";
import { drawWaterfall } from "../waterfall-view";
import { ledgerOf } from "../step-ledger";
import { drawLedger } from "../step-ledger-view";
import { EXPLORATION_BUDGET, explorationOf } from "../exploration";

/** SPEC §2's budgets of a run: 25 steps, 180 s. */
const STEP_BUDGET = 25;

/** What the run waits for, from its latest ask_user / confirmation_required event. */
interface Waiting {
  readonly kind: "input" | "confirmation";
  readonly event: RunEvent;
}

/** A run's page: its summary and budgets, the actions its state allows, and its live timeline. */
export function renderRun(main: HTMLElement, id: string): () => void {
  const stop = new AbortController();
  let snapshot: RunSnapshot | null = null;
  let waiting: Waiting | null = null;
  let finished = false;
  let maxStep = 0;
  let refreshQueued = false;
  /** The stored events seen (the live-only ones have no seq): what the waterfall and the exploration count read. */
  const stored: RunEvent[] = [];
  let timingsQueued = false;

  const summary = h("dl", { class: "summary" });
  const budgets = h("p", { class: "muted", id: "budgets" });
  const actions = h("section", { class: "card actions", "aria-labelledby": "actions-title", hidden: true });
  const answer = h("section", { class: "card", id: "answer", "aria-labelledby": "answer-title", hidden: true });
  const live = h("p", { class: "muted", id: "stream-status" });
  const error = h("p", { class: "error", role: "alert" });
  const timeline = createTimeline();
  const timings = h("div", { id: "waterfall" });
  const ledger = h("div", { id: "step-ledger" });

  const field = (label: string, value: string) => [h("dt", {}, label), h("dd", {}, value)];
  const act = async (what: string, call: () => Promise<RunSnapshot>) => {
    error.textContent = "";
    try {
      show(await call());
      announce(what);
    } catch (err) {
      error.textContent = err instanceof ApiError ? err.message : `${what} failed`;
    }
  };

  function drawActions(): void {
    if (!snapshot || TERMINAL_STATES.has(snapshot.state)) {
      actions.hidden = true;
      return;
    }
    const parts: Node[] = [h("h2", { id: "actions-title" }, "Act on this run")];
    if (snapshot.state === "awaiting_input" && waiting?.kind === "input") {
      const d = waiting.event.data;
      const reply = h("input", { id: "answer-input", type: "text", required: true, maxlength: "4000", autocomplete: "off" });
      const options = Array.isArray(d.options) ? d.options.map(str) : [];
      parts.push(
        h(
          "form",
          {
            onsubmit: (event: Event) => {
              event.preventDefault();
              void act("answer sent", () => runs.answer(id, reply.value));
            },
          },
          h("label", { for: "answer-input" }, str(d.question)),
          options.length ? h("p", { class: "muted" }, `Options: ${options.join(", ")}`) : null,
          reply,
          h("button", { type: "submit" }, "Send answer"),
        ) as Node,
      );
    }
    if (snapshot.state === "awaiting_confirmation" && waiting?.kind === "confirmation") {
      const d = waiting.event.data;
      const fingerprint = typeof d.fingerprint === "string" ? d.fingerprint : undefined;
      parts.push(
        h(
          "div",
          { class: "approval" },
          h("p", {}, "Approving runs exactly this call:"),
          h("p", {}, h("strong", { id: "approval-tool" }, str(d.tool_name))),
          h("pre", { class: "args", id: "approval-arguments" }, h("code", {}, prettyArguments(d.arguments))),
          h("button", { type: "button", onclick: () => void act("approved", () => runs.decide(id, "approve", fingerprint)) }, "Approve"),
          " ",
          h("button", { type: "button", class: "secondary", onclick: () => void act("rejected", () => runs.decide(id, "reject", fingerprint)) }, "Reject"),
        ),
      );
    }
    parts.push(h("p", {}, h("button", { type: "button", class: "danger", onclick: () => void act("cancel requested", () => runs.cancel(id)) }, "Cancel run")));
    replace(actions, ...parts);
    actions.hidden = false;
  }

  function drawBudgets(): void {
    if (!snapshot) return;
    const exploration = explorationOf(stored);
    const steps = `steps ${maxStep} of ${STEP_BUDGET}, exploration ${exploration.used} of ${EXPLORATION_BUDGET}${exploration.blocked ? " (spent)" : ""}`;
    const left =
      snapshot.deadline_at && !TERMINAL_STATES.has(snapshot.state) ? `, time left ${duration(Date.parse(snapshot.deadline_at) - Date.now())} of 180 s` : "";
    const usage = snapshot.usage
      ? `, ${snapshot.usage.model_calls} model calls, ${snapshot.usage.tool_calls} tool calls, ${snapshot.usage.input_tokens + snapshot.usage.output_tokens} tokens`
      : "";
    budgets.textContent = `Budgets: ${steps}${left}${usage}`;
  }

  function show(next: RunSnapshot): void {
    const changed = snapshot?.state !== next.state;
    snapshot = next;
    replace(
      summary,
      ...field("State", next.state.replace("_", " ")),
      ...field("Mode", next.mode),
      ...field("Created", since(next.created_at)),
      ...field("Duration", runDuration(next.started_at, next.finished_at)),
      ...(next.error ? field("Error", `${str(next.error.code)} ${str(next.error.message)}`) : []),
    );
    summary.setAttribute("data-state", next.state);
    if (next.state === "succeeded" && next.output) {
      replace(answer, h("h2", { id: "answer-title" }, "Answer"), timelineAnswer(next), evidenceList(next.output.evidence));
      answer.hidden = false;
    }
    drawBudgets();
    drawActions();
    if (changed) announce(`run ${next.state.replace("_", " ")}`);
  }

  const refresh = () => {
    if (refreshQueued) return;
    refreshQueued = true;
    setTimeout(() => {
      refreshQueued = false;
      void runs.get(id).then(show, () => undefined);
    }, 100);
  };

  const drawTimings = () => drawWaterfall(timings, waterfallOf(stored));
  /** A replayed history arrives as a burst of events: drawn once after it. */
  const queueTimings = () => {
    if (timingsQueued) return;
    timingsQueued = true;
    setTimeout(() => {
      timingsQueued = false;
      drawTimings();
      drawLedger(ledger, ledgerOf(stored));
      drawBudgets();
    }, 50);
  };

  const onEvent = (event: RunEvent) => {
    timeline.add(event);
    if (event.seq !== undefined && !stored.some((e) => e.seq === event.seq)) {
      stored.push(event);
      queueTimings();
    }
    const step = Number(event.data.step_no);
    if (Number.isFinite(step) && step > maxStep) maxStep = step;
    if (event.type === "ask_user") waiting = { kind: "input", event };
    if (event.type === "confirmation_required") waiting = { kind: "confirmation", event };
    if (TERMINAL_EVENTS.has(event.type)) finished = true;
    if (event.seq !== undefined) refresh();
  };

  replace(main, h("p", { class: "muted" }, "Loading the run…"));
  void runs.get(id).then(
    (first) => {
      replace(
        main,
        h("p", {}, h("a", { href: "#/" }, "← All runs")),
        h("h1", {}, "Run ", h("code", { id: "run-id" }, id)),
        h("p", { class: "input" }, h("q", {}, first.input)),
        summary,
        budgets,
        error,
        actions,
        answer,
        h("section", { class: "card", "aria-labelledby": "timings-title" }, h("h2", { id: "timings-title" }, "Time at a glance"), timings),
        h("section", { class: "card", "aria-labelledby": "ledger-title" }, h("h2", { id: "ledger-title" }, "Step ledger"), ledger),
        h("section", { class: "card", "aria-labelledby": "timeline-title" }, h("h2", { id: "timeline-title" }, "Timeline"), live, timeline.element),
      );
      show(first);
      const ticker = setInterval(() => {
        drawBudgets();
        // An unanswered question's bar grows while the page is open.
        if (!finished && stored.length > 0) drawTimings();
      }, 1000);
      stop.signal.addEventListener("abort", () => clearInterval(ticker));
      void followEvents({
        path: `/v1/agents/runs/${encodeURIComponent(id)}/events`,
        token: currentToken() ?? "",
        signal: stop.signal,
        finished: () => finished,
        onMessage: (message) => onEvent(eventOf(message)),
        onStatus: (status, detail) => {
          live.textContent = status === "live" ? "Live" : status === "reconnecting" ? "Reconnecting…" : `Stream ended${detail ? `: ${detail}` : ""}`;
          if (status === "ended") refresh();
        },
      });
    },
    (err: unknown) => {
      const notFound = err instanceof ApiError && err.status === 404;
      replace(
        main,
        h("p", {}, h("a", { href: "#/" }, "← All runs")),
        h("h1", {}, notFound ? "Run not found" : "The run could not be read"),
        h("p", { role: "alert" }, notFound ? "There is no run with this id among yours." : err instanceof Error ? err.message : ""),
      );
    },
  );
  return () => stop.abort();
}

function timelineAnswer(run: RunSnapshot): Node {
  return h("div", { class: "markdown answer", id: "final-answer" }, renderMarkdown(run.output?.text ?? ""));
}
