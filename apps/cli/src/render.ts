import type { EventView } from "./event-view";
import type { Style } from "./style";

const str = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

/** An id as tables show it: its last 8 hex digits, as the console shows it (docs/architecture.md, "Ids are time-ordered"). */
export const shortId = (id: string): string => id.slice(-8);

/** Shortens one-line text to `max` characters with an ellipsis. */
export function clip(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Arguments of a tool call (a JSON string on the wire) as compact JSON. */
export function formatArguments(raw: unknown): string {
  if (typeof raw !== "string") return clip(str(raw));
  try {
    return clip(JSON.stringify(JSON.parse(raw)));
  } catch {
    return clip(raw);
  }
}

function formatError(error: unknown): string {
  const e = (error ?? {}) as Record<string, unknown>;
  const where = [
    e.tool_name ? `tool ${str(e.tool_name)}` : "",
    e.step_no ? `step ${str(e.step_no)}` : "",
    e.cycle_length ? `cycle of ${str(e.cycle_length)}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  return `${str(e.code)} ${str(e.message)}${where ? ` (${where})` : ""}`.trim();
}

function evidenceLines(style: Style, evidence: unknown): string[] {
  if (!Array.isArray(evidence) || evidence.length === 0) return [];
  return [style.dim("  sources:"), ...evidence.map((e: Record<string, unknown>) => style.dim(`    - ${str(e.title)} (${str(e.document_id)})`))];
}

/**
 * Renders run events for a person, one call per event, keeping what it needs between calls (streamed
 * answer text). Returns the text to write (with its newlines), or "" for an event it does not show.
 */
export function createRenderer(style: Style): { render(event: EventView): string } {
  /** Steps whose answer was shown as it streamed: their `message` only ends the line. */
  const streamed = new Set<string>();
  /**
   * Streamed answers another line cut into: a delta is live and can overtake a stored event of the same run
   * (input.received published a moment later, say), so their `message` prints the answer whole once more.
   */
  const cut = new Set<string>();
  /** The step whose deltas are being written. */
  let streaming: string | null = null;
  let midLine = false;

  const lines = (...out: string[]): string => {
    const prefix = midLine ? "\n" : "";
    if (midLine && streaming !== null) cut.add(streaming);
    midLine = false;
    return `${prefix}${out.join("\n")}\n`;
  };

  function render(event: EventView): string {
    const d = event.data;
    switch (event.type) {
      case "run.queued":
        return lines(style.dim(`queued (${str(d.mode) || "agent"} mode): ${clip(str(d.input))}`));
      case "run.started":
        return lines(style.dim(`started on ${str(d.runner_id) || "a runner"}`));
      case "thought":
        return str(d.text).trim() ? lines(style.magenta(`thinking: ${clip(str(d.text), 400)}`)) : "";
      case "tool_call":
        return lines(`${style.cyan("→")} ${style.bold(str(d.tool_name))} ${style.dim(formatArguments(d.arguments))}`);
      case "tool.decided": {
        const ids = Array.isArray(d.policy_ids) && d.policy_ids.length ? ` by ${d.policy_ids.join(", ")}` : "";
        const verdict = d.permit ? style.green("permit") : style.red(`deny ${str(d.code)}`);
        return lines(`  policy ${str(d.policy_point)}: ${verdict}${style.dim(ids)}`);
      }
      case "tool_result": {
        const code = str(d.result_code);
        const mark = code === "ok" ? style.green("←") : style.yellow("←");
        return lines(`${mark} ${str(d.tool_name)}: ${code === "ok" ? code : style.yellow(code)} ${style.dim(clip(str(d.result), 120))}`.trimEnd());
      }
      case "knowledge.proposed":
        return lines(style.dim(`  proposed knowledge "${clip(str(d.title), 80)}" (${str(d.proposal_id)}): pending review`));
      case "circuit.opened":
        return lines(style.yellow(`! ${str(d.tool_name)} failed ${str(d.failures)} times in a row: its circuit is open`));
      case "ask_user": {
        const options = Array.isArray(d.options) ? d.options.map((o, i) => `  ${i + 1}. ${str(o)}`) : [];
        return lines(style.bold(style.yellow(`? ${str(d.question)}`)), ...options);
      }
      case "input.received":
        return lines(style.dim(`  answered: ${clip(str(d.answer))}`));
      case "confirmation_required":
        return lines(style.bold(style.yellow(`! approval needed: ${str(d.tool_name)} ${formatArguments(d.arguments)}`)));
      case "confirmation.decided":
        return lines(style.dim(`  ${d.decision === "approve" ? "approved" : "rejected"}${d.channel ? ` via ${str(d.channel)}` : ""}`));
      case "provider.fallback":
        return lines(style.yellow(`! model provider ${str(d.from)} failed; ${str(d.to)} answers`));
      case "message.delta": {
        const text = str(d.delta);
        if (!text) return "";
        streamed.add(str(d.step_no));
        streaming = str(d.step_no);
        midLine = !text.endsWith("\n");
        return text;
      }
      case "message":
        streaming = null;
        if (streamed.has(str(d.step_no)) && !cut.has(str(d.step_no))) {
          const end = midLine ? "\n" : "";
          midLine = false;
          return end;
        }
        return lines(str(d.text));
      case "run.cancel_requested":
        return lines(style.dim("cancel requested"));
      case "run.succeeded":
        return lines(style.green("✓ succeeded"), ...evidenceLines(style, (d.output as Record<string, unknown> | null)?.evidence));
      case "run.failed":
        return lines(style.red(`✗ failed: ${formatError(d.error)}`));
      case "run.cancelled":
        return lines(style.red(`✗ cancelled${d.error ? `: ${formatError(d.error)}` : ""}`));
      case "iteration_limit":
        return lines(style.yellow(`! the step budget (${str(d.limit)}) is spent`));
      case "error":
        return ""; // the run.failed right after it says the same
      default:
        return lines(style.dim(`· ${event.type}`));
    }
  }

  return { render };
}
