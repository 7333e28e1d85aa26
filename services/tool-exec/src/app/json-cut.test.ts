import { cutText, cutValue, sizeModelOf } from "./json-cut";

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");

describe("json-cut: cutting a JSON value while keeping its shape", () => {
  const sample = {
    sql: "select * from t",
    columns: ["id", "body", "note"],
    rows: [
      [1, "x".repeat(500), null],
      [2, 'quote " and backslash \\ and tab\t'.repeat(20), true],
      [3, "é😀 mixed ".repeat(80), { nested: ["a".repeat(300), 4.5, false] }],
    ],
    empty: [],
    nothing: {},
    wide: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, `v${i}`.repeat(i)])),
  };

  it("predicts the exact size of every cut, for texts of every kind and lists and objects of every length", () => {
    const model = sizeModelOf(sample);
    expect(model.longestText).toBe(Math.max(500, 'quote " and backslash \\ and tab\t'.length * 20, "é😀 mixed ".length * 80));
    expect(model.longestList).toBe(40);
    for (const textChars of [0, 1, 5, 17, 64, 199, 300, 499, 500, 501, 5000]) {
      for (const items of [0, 1, 2, 3, 7, 39, 40, 41]) {
        expect([textChars, items, model.bytes(textChars, items)]).toEqual([textChars, items, jsonBytes(cutValue(sample, textChars, items))]);
      }
    }
  });

  it("marks each cut where it happened", () => {
    expect(cutText("abcdef", 3)).toBe("abc… [cut: 3 of 6 characters]");
    expect(cutValue([1, 2, 3], 10, 2)).toEqual([1, 2, "… [cut: 1 more of 3 items]"]);
    expect(cutValue({ a: 1, b: 2, c: 3 }, 10, 1)).toEqual({ a: 1, "…": "[cut: 2 more of 3 fields]" });
  });

  it("never keeps half of a surrogate pair", () => {
    const cut = cutText("a😀b", 2);
    expect(cut.startsWith("a…")).toBe(true);
    expect(Buffer.from(cut, "utf8").toString("utf8")).toBe(cut); // no lone surrogate
  });
});
