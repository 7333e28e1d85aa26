/**
 * Where a run's time went, from its stored events' `recorded_at` (pure: no DOM, specced in Node).
 *
 * What the timestamps mean (services/agent-runner/src/app/drive-run.ts, domain/decider.ts): the runner appends
 * a decision's events in one commit *before* the I/O they name, and the store stamps each row as it is written.
 * So a model call runs from the runner's previous append to the `thought` / `message` / `message.truncated`
 * that records its answer; a tool call runs from its `tool_call` (the in-flight marker, appended before the
 * call is sent) to its `tool_result`. tool-exec asks the PDP and runs the tool in one call, and the runner
 * appends `tool.decided` and `tool_result` together when it answers, so the events' stamps cannot split that
 * span; tool-exec's own clock can: a `tool_result` carries `timings` (`decision_ms`, `tool_ms`), and the span
 * becomes the policy decision, then the tool, then the rest (sending the call, waiting for a write's record,
 * answering, and the runner's appends around it), drawn in that order. A call recorded without timings
 * (before tool-exec sent them, refused arguments) or still in flight stays one "policy + tool" bar.
 */

/** The fields of a stored event the waterfall reads. */
export interface TimedEvent {
  readonly type: string;
  readonly seq?: number;
  readonly data: Record<string, unknown>;
  readonly recorded_at?: string;
}

/** `pdp`, `tool` and `records` split a timed tool call; `policy-tool` is one without timings. */
export type BarKind = "queue" | "model" | "pdp" | "tool" | "records" | "policy-tool" | "wait" | "resume";

export interface Bar {
  readonly kind: BarKind;
  /** What the bar is, for people: "step 2 · model (tool calls)", "step 2 · knowledge_search". */
  readonly label: string;
  readonly step: number | null;
  /** Offset from the run's first event, ms. */
  readonly startMs: number;
  readonly durationMs: number;
  /** Still going (a question not yet answered): drawn up to `now`. */
  readonly open: boolean;
  /** The widest bar: the step to look at first. */
  readonly slowest: boolean;
}

export interface Waterfall {
  /** From the run's first event to its terminal event (or `now` while it is live), ms. */
  readonly totalMs: number;
  readonly bars: readonly Bar[];
}

const TERMINAL = new Set(["run.succeeded", "run.failed", "run.cancelled"]);
/**
 * Appended by someone other than the runner in its loop, or in the same commit as a model answer: never the
 * moment a model call began. (A cancel request arrives from the creator while the model is being asked; a
 * fallback is recorded with the answer of the provider that did answer.)
 */
const NOT_A_MODEL_START = new Set(["run.cancel_requested", "provider.fallback", "run.queued"]);

const str = (v: unknown) => (typeof v === "string" ? v : "");
const stepOf = (e: TimedEvent): number | null => (typeof e.data.step_no === "number" ? e.data.step_no : null);
const ms = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);

/** tool-exec's timings on a result, when it sent them (whole, non-negative ms). */
function timingsOf(result: TimedEvent): { decisionMs: number; toolMs: number } | null {
  const t = result.data.timings as Record<string, unknown> | undefined;
  const decisionMs = ms(t?.decision_ms);
  const toolMs = ms(t?.tool_ms);
  return decisionMs === null || toolMs === null ? null : { decisionMs, toolMs };
}

/** The bars of a run's stored events, in the order they began. Events without `recorded_at` (live-only) are ignored. */
export function waterfallOf(events: readonly TimedEvent[], now: number = Date.now()): Waterfall {
  const timed = events
    .filter((e) => typeof e.recorded_at === "string" && Number.isFinite(Date.parse(e.recorded_at)))
    .map((e) => ({ e, at: Date.parse(e.recorded_at!) }));
  if (timed.length === 0) return { totalMs: 0, bars: [] };
  const origin = timed[0].at;
  const terminal = timed.find(({ e }) => TERMINAL.has(e.type));
  const end = terminal ? terminal.at : Math.max(now, timed[timed.length - 1].at);
  const bars: Omit<Bar, "slowest">[] = [];
  const bar = (kind: BarKind, label: string, step: number | null, from: number, to: number, open = false) =>
    bars.push({ kind, label, step, startMs: from - origin, durationMs: Math.max(0, to - from), open });

  for (let i = 0; i < timed.length; i += 1) {
    const { e, at } = timed[i];
    const step = stepOf(e);
    const callId = str(e.data.call_id);
    const later = (match: (x: TimedEvent) => boolean) => timed.slice(i + 1).find(({ e: x }) => match(x));
    switch (e.type) {
      case "run.queued": {
        const started = later((x) => x.type === "run.started");
        if (started) bar("queue", "queued", null, at, started.at);
        break;
      }
      case "thought":
      case "message":
      case "message.truncated": {
        let j = i - 1;
        while (j >= 0 && NOT_A_MODEL_START.has(timed[j].e.type)) j -= 1;
        const what = e.type === "thought" ? "tool calls" : e.type === "message" ? "answer" : "cut at its output limit";
        if (j >= 0) bar("model", `step ${step ?? "?"} · model (${what})`, step, timed[j].at, at);
        break;
      }
      case "tool_call": {
        const result = later((x) => x.type === "tool_result" && str(x.data.call_id) === callId);
        const name = `step ${step ?? "?"} · ${str(e.data.tool_name) || "tool"}`;
        const timings = result ? timingsOf(result.e) : null;
        if (result && timings) {
          // Two clocks: tool-exec's durations are fitted inside the store's span, never past its end.
          const decided = Math.min(at + timings.decisionMs, result.at);
          const ran = Math.min(decided + timings.toolMs, result.at);
          const denied = (result.e.data.decision as { permit?: unknown } | undefined)?.permit === false;
          bar("pdp", `${name} (policy${denied ? ", denied" : ""})`, step, at, decided);
          // A denied call never ran its tool: no tool bar.
          if (!denied) bar("tool", `${name} (tool)`, step, decided, ran);
          bar("records", `${name} (transport + records)`, step, ran, result.at);
        } else if (result) bar("policy-tool", `${name} (policy + tool)`, step, at, result.at);
        else if (!terminal) bar("policy-tool", `${name} (policy + tool)`, step, at, end, true);
        break;
      }
      case "ask_user":
      case "confirmation_required": {
        const answerType = e.type === "ask_user" ? "input.received" : "confirmation.decided";
        const label = `step ${step ?? "?"} · waiting for ${e.type === "ask_user" ? "an answer" : "approval"}`;
        const answered = later((x) => x.type === answerType && str(x.data.call_id) === callId);
        if (answered) bar("wait", label, step, at, answered.at);
        else bar("wait", label, step, at, end, !terminal);
        break;
      }
      case "input.received":
      case "confirmation.decided": {
        // The answer queues the run again: the time until a runner picks it up.
        const next = later((x) => x.type !== "run.cancel_requested");
        if (next && !TERMINAL.has(next.e.type)) bar("resume", "back in the queue", null, at, next.at);
        break;
      }
      default:
        break;
    }
  }
  bars.sort((a, b) => a.startMs - b.startMs);
  let slowest = -1;
  bars.forEach((b, i) => {
    if (b.durationMs > 0 && (slowest < 0 || b.durationMs > bars[slowest].durationMs)) slowest = i;
  });
  return { totalMs: Math.max(0, end - origin), bars: bars.map((b, i) => ({ ...b, slowest: i === slowest })) };
}

/** "412 ms", "3.2 s", "2 min 5 s": precise enough to compare bars. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}
