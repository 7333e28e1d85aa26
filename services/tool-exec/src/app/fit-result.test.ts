import { PayloadLimits } from "@steward/contract";
import { fitToolResult, type ToolResultBody } from "./fit-result";

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

describe("fitToolResult: a tool result always fits its event", () => {
  it("given a result within the limit, then it is handed over untouched", () => {
    const body: ToolResultBody = { result: { rows: [[1, "a"]] }, evidence: [], next_state: "focused" };
    const fitted = fitToolResult(body);
    expect(fitted.cut).toBeNull();
    expect(fitted.body).toBe(body);
  });

  it("given a 1.5 MB dataset cell, then the cell is cut, the shape kept, and the note gives the original size", () => {
    const cell = "x".repeat(1_500_000);
    const body: ToolResultBody = { result: { sql: "select body from docs", columns: ["id", "body"], rows: [[7, cell]], row_count: 1 }, evidence: [] };
    const original = bytesOf(body);
    const { body: fitted, cut } = fitToolResult(body);
    expect(bytesOf(fitted)).toBeLessThanOrEqual(PayloadLimits.toolResultBytes);
    // Most of the room is used: the cut is the largest that fits, not a token preview.
    expect(bytesOf(fitted)).toBeGreaterThan(PayloadLimits.toolResultBytes - 1024);
    const result = fitted.result as {
      sql: string;
      columns: string[];
      rows: [number, string][];
      row_count: number;
      result_cut: { note: string; original_bytes: number };
    };
    expect(result.sql).toBe("select body from docs");
    expect(result.columns).toEqual(["id", "body"]);
    expect(result.row_count).toBe(1);
    expect(result.rows[0][0]).toBe(7);
    expect(result.rows[0][1]).toMatch(/^x+… \[cut: \d+ of 1500000 characters\]$/);
    expect(cut?.original_bytes).toBe(original);
    expect(result.result_cut).toEqual(cut);
    expect(result.result_cut.note).toContain(`${original} bytes`);
  });

  it("given many rows of short texts, then the lists keep their first items and say how many went", () => {
    const rows = Array.from({ length: 40_000 }, (_, i) => [i, `row ${i}`]);
    const { body: fitted, cut } = fitToolResult({ result: { rows }, evidence: [] });
    expect(cut).not.toBeNull();
    expect(bytesOf(fitted)).toBeLessThanOrEqual(PayloadLimits.toolResultBytes);
    const kept = (fitted.result as { rows: unknown[] }).rows;
    expect(kept[0]).toEqual([0, "row 0"]);
    expect(kept.at(-1)).toMatch(/^… \[cut: \d+ more of 40000 items\]$/);
    expect(kept.length).toBeGreaterThan(1000);
  });

  it("never splits a surrogate pair, so the cut text is still valid Unicode for PostgreSQL", () => {
    const body: ToolResultBody = { result: "😀".repeat(300_000), evidence: [] };
    const { body: fitted } = fitToolResult(body, 10_000);
    const value = (fitted.result as { value: string }).value;
    expect(bytesOf(fitted)).toBeLessThanOrEqual(10_000);
    expect(Buffer.from(value, "utf8").toString("utf8")).toBe(value); // no lone surrogate
    expect(value.startsWith("😀😀")).toBe(true);
  });

  it("keeps evidence in its shape (ids and scores whole), cutting only its texts and its length", () => {
    const evidence = Array.from({ length: 50 }, (_, i) => ({
      document_id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      title: `doc ${i}`,
      snippet: "s".repeat(20_000),
      score: 0.5,
    }));
    const { body: fitted } = fitToolResult({ result: { matches: 50 }, evidence, next_state: "searched" });
    expect(bytesOf(fitted)).toBeLessThanOrEqual(PayloadLimits.toolResultBytes);
    expect(fitted.next_state).toBe("searched");
    expect(fitted.evidence.length).toBeGreaterThan(0);
    for (const [i, e] of fitted.evidence.entries()) {
      expect(Object.keys(e).sort()).toEqual(["document_id", "score", "snippet", "title"]);
      expect(e.document_id).toBe(evidence[i].document_id);
      expect(e.score).toBe(0.5);
    }
  });

  it("given an object of very many fields, then it keeps its first fields and says how many went", () => {
    const wide = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`field_${i}`, i]));
    const { body: fitted } = fitToolResult({ result: wide, evidence: [] }, 8_000);
    expect(bytesOf(fitted)).toBeLessThanOrEqual(8_000);
    const result = fitted.result as Record<string, unknown>;
    expect(result.field_0).toBe(0);
    expect(result["…"]).toMatch(/^\[cut: \d+ more of 30000 fields\]$/);
  });

  it("given a shape no cut can shrink (a field name alone is too long), then a preview of its JSON text with the note", () => {
    const odd = { ["k".repeat(20_000)]: 1 };
    const { body: fitted, cut } = fitToolResult({ result: odd, evidence: [] }, 8_000);
    expect(bytesOf(fitted)).toBeLessThanOrEqual(8_000);
    const result = fitted.result as { preview: string; result_cut: unknown };
    expect(result.result_cut).toEqual(cut);
    expect(result.preview).toMatch(/^\{"kkkk+… \[cut: \d+ of \d+ characters\]$/);
  });
});
