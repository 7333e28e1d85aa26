import { h, replace } from "./dom";
import { formatMs, type Waterfall } from "./waterfall";

const KIND_NAMES: Record<string, string> = {
  queue: "queue",
  model: "model",
  pdp: "policy decision",
  tool: "tool",
  records: "transport + records",
  "policy-tool": "policy + tool",
  wait: "a person",
  resume: "queue",
};

/**
 * Draws a waterfall as a list: per bar its label and its time as text (what a screen reader reads), and the
 * bar itself, decorative, placed on the run's time axis. Positions are set through the CSSOM
 * (`element.style`), which the console's CSP (`style-src 'self'`, no inline style attributes) allows.
 */
export function drawWaterfall(target: HTMLElement, waterfall: Waterfall): void {
  if (waterfall.bars.length === 0) {
    replace(target, h("p", { class: "muted" }, "No timings yet."));
    return;
  }
  const total = Math.max(1, waterfall.totalMs);
  const rows = waterfall.bars.map((bar) => {
    const fill = h("span", { class: `wf-fill wf-${bar.kind}${bar.open ? " wf-open" : ""}` });
    fill.style.left = `${(100 * bar.startMs) / total}%`;
    // At least a sliver, so a 0 ms step is still seen to happen at its moment.
    fill.style.width = `max(2px, ${(100 * bar.durationMs) / total}%)`;
    const time = `${formatMs(bar.durationMs)}${bar.open ? " so far" : ""}`;
    return h(
      "li",
      { class: `wf-row${bar.slowest ? " wf-slowest" : ""}`, "data-kind": bar.kind },
      h("span", { class: "wf-label" }, bar.label),
      h(
        "span",
        { class: "wf-time" },
        time,
        h("span", { class: "muted" }, ` at +${formatMs(bar.startMs)}`),
        bar.slowest ? h("strong", { class: "wf-flag" }, " slowest") : null,
      ),
      h("span", { class: "wf-track", "aria-hidden": "true", title: `${KIND_NAMES[bar.kind] ?? bar.kind}: ${time}` }, fill),
    );
  });
  replace(
    target,
    h(
      "p",
      { class: "muted" },
      `${formatMs(waterfall.totalMs)} in all. `,
      "A tool call shows the policy decision, then the tool, as tool-exec timed them, then the rest (sending the call ",
      "and recording its result); a call recorded without those times is one policy + tool bar.",
    ),
    h("ol", { class: "waterfall", "aria-label": "Time per phase" }, ...rows),
  );
}
