import { PayloadLimits, type Evidence } from "@steward/contract";
import { cutText, cutValue, sizeModelOf, type SizeModel } from "./json-cut";

/** What a call hands back for the tool_result event: the tool's result, its evidence, a state it moved to. */
export interface ToolResultBody {
  result: unknown;
  evidence: Evidence[];
  next_state?: string;
}

/** The note a cut result carries under `result_cut`, beside what was kept. */
export interface CutNote {
  readonly note: string;
  /** Bytes of the whole result (UTF-8 JSON of result, evidence and next state) before the cut. */
  readonly original_bytes: number;
}

/** The fewest characters a cut text keeps (a uuid or a short name is never cut). */
const MIN_TEXT_CHARS = 64;
/** Characters each text keeps when lists must be shortened as well. */
const TEXT_CHARS_WITH_SHORT_LISTS = 256;
/** Evidence may take at most this share of the limit; the result gets the rest. */
const EVIDENCE_SHARE = 0.25;

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

/** The largest value in [lo, hi] for which `fits` holds, given that it holds at `lo` and not at `hi`. */
function largestFitting(lo: number, hi: number, fits: (n: number) => boolean): number {
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Evidence keeps its shape (it becomes the run's output evidence): its texts are cut, then its tail dropped. */
function fitEvidence(evidence: readonly Evidence[], budget: number): Evidence[] {
  if (bytesOf(evidence) <= budget) return [...evidence];
  const cut = evidence.map((e) => ({ ...e, title: cutText(e.title, TEXT_CHARS_WITH_SHORT_LISTS), snippet: cutText(e.snippet, 1000) }));
  const kept: Evidence[] = [];
  let bytes = 2;
  for (const e of cut) {
    bytes += bytesOf(e) + (kept.length > 0 ? 1 : 0);
    if (bytes > budget) break;
    kept.push(e);
  }
  return kept;
}

/**
 * Makes a tool's result fit an event (SPEC §10): a result over `maxBytes` is cut — long texts first, then
 * long lists — keeping its shape, and carries a `result_cut` note with its original size. A result that
 * still does not fit (a single field name too long) is replaced by a preview of its JSON text. The largest
 * cut that fits is found by bisection over a size model (no copy per try); the one copy made is measured,
 * so what comes back is never over `maxBytes`.
 */
export function fitToolResult(body: ToolResultBody, maxBytes: number = PayloadLimits.toolResultBytes): { body: ToolResultBody; cut: CutNote | null } {
  const originalBytes = bytesOf(body);
  if (originalBytes <= maxBytes) return { body, cut: null };
  const cut: CutNote = {
    note:
      `The tool's result was ${originalBytes} bytes, more than the ${maxBytes} bytes a result may have, and was cut to fit: ` +
      'long texts end with "… [cut: …]" and long lists keep their first items. Ask for less (filter, aggregate, a narrower query) to see the rest.',
    original_bytes: originalBytes,
  };
  const state = body.next_state ? { next_state: body.next_state } : {};
  const evidence = fitEvidence(body.evidence, Math.floor(maxBytes * EVIDENCE_SHARE));
  // Plain JSON from here on (no undefined, Date or toJSON), so that the model counts what JSON.stringify writes.
  const result: unknown = JSON.parse(JSON.stringify(body.result ?? null));
  const isMap = result !== null && typeof result === "object" && !Array.isArray(result);
  const annotate = (value: unknown) => (isMap ? { ...(value as object), result_cut: cut } : { value, result_cut: cut });
  const build = (textChars: number, items: number): ToolResultBody => ({ result: annotate(cutValue(result, textChars, items)), evidence, ...state });

  // Everything but the cut value itself: the envelope with the evidence, and the note (a map keeps ≥ 1 field).
  const envelopeBytes = bytesOf({ result: null, evidence, ...state }) - "null".length;
  const noteBytes = isMap
    ? bytesOf({ result_cut: cut }) - "{}".length + (Object.keys(result as object).length > 0 ? ",".length : 0)
    : bytesOf({ value: null, result_cut: cut }) - "null".length;
  const room = maxBytes - envelopeBytes - noteBytes;
  const model: SizeModel = sizeModelOf(result);
  const fits = (textChars: number, items: number) => model.bytes(textChars, items) <= room;
  const allItems = model.longestList + 1;

  let chosen: ToolResultBody | null = null;
  if (fits(MIN_TEXT_CHARS, allItems)) {
    // A text of more characters than the limit has bytes can never fit: no need to try longer ones.
    const textChars = largestFitting(MIN_TEXT_CHARS, Math.min(model.longestText, maxBytes) + 1, (n) => fits(n, allItems));
    chosen = build(textChars, allItems);
  } else if (fits(TEXT_CHARS_WITH_SHORT_LISTS, 1)) {
    chosen = build(
      TEXT_CHARS_WITH_SHORT_LISTS,
      largestFitting(1, allItems, (n) => fits(TEXT_CHARS_WITH_SHORT_LISTS, n)),
    );
  }
  if (chosen && bytesOf(chosen) <= maxBytes) return { body: chosen, cut };
  // A JSON escape is at most 6 bytes a character: this many characters always fit beside the note.
  const previewChars = Math.max(0, Math.floor((maxBytes - bytesOf({ result: { result_cut: cut, preview: "" }, evidence, ...state })) / 6) - 64);
  return { body: { result: { result_cut: cut, preview: cutText(JSON.stringify(result), previewChars) }, evidence, ...state }, cut };
}
