import { h, replace } from "./dom";
import type { LedgerLine } from "./step-ledger";

/** The step ledger as a table: step, tool, outcome, preview — text nodes only (results are untrusted). */
export function drawLedger(target: HTMLElement, lines: readonly LedgerLine[]): void {
  if (lines.length === 0) {
    replace(target, h("p", { class: "muted" }, "No tool steps yet."));
    return;
  }
  replace(
    target,
    h(
      "table",
      { class: "ledger" },
      h("caption", { class: "visually-hidden" }, "Tool steps, newest first"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "Step"),
          h("th", { scope: "col" }, "Tool"),
          h("th", { scope: "col" }, "Outcome"),
          h("th", { scope: "col" }, "Result"),
        ),
      ),
      h(
        "tbody",
        {},
        ...lines.map((line) =>
          h(
            "tr",
            { "data-step": String(line.step) },
            h("td", {}, String(line.step)),
            h("td", {}, h("code", {}, line.tool)),
            h("td", { class: line.code === "ok" ? "ok" : "bad" }, line.code),
            h("td", {}, h("code", { class: "preview" }, line.preview)),
          ),
        ),
      ),
    ),
  );
}
