import { canonicalJson } from "./canonical-json";
import { callFingerprint, toolFingerprint } from "./fingerprint";

// "é" precomposed (NFC) and as "e" + combining acute accent (NFD).
const nfc = "caf\u00e9";
const nfd = "cafe\u0301";

describe("canonicalJson", () => {
  it("ignores object key order, at every depth", () => {
    const a = { b: 1, a: { y: true, x: null } };
    const b = { a: { x: null, y: true }, b: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(JSON.parse(canonicalJson(a))).toEqual(a);
  });

  it("writes no white space", () => {
    expect(canonicalJson({ b: { c: "x y" }, a: [1, 2] })).toBe('{"a":[1,2],"b":{"c":"x y"}}');
  });

  it("gives NFC and NFD spellings of a string the same text, in values and in keys", () => {
    expect(nfc).not.toBe(nfd);
    expect(canonicalJson(nfc)).toBe(canonicalJson(nfd));
    expect(canonicalJson({ [nfd]: nfd })).toBe(canonicalJson({ [nfc]: nfc }));
  });

  it("keeps the order of arrays, nested ones included", () => {
    expect(canonicalJson([[1, 2], [3]])).not.toBe(canonicalJson([[2, 1], [3]]));
    expect(canonicalJson([[1, 2], [3]])).not.toBe(canonicalJson([[3], [1, 2]]));
  });

  it("drops undefined properties", () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
  });

  it.each([NaN, Infinity, -Infinity])("throws on the non-finite number %p", (n) => {
    expect(() => canonicalJson({ limit: n })).toThrow(TypeError);
  });

  it("throws on values JSON cannot hold", () => {
    expect(() => canonicalJson(() => 1)).toThrow(TypeError);
    expect(() => canonicalJson(BigInt(1))).toThrow(TypeError);
  });
});

describe("toolFingerprint", () => {
  it("is 64 lowercase hex characters", () => {
    expect(toolFingerprint("search", { q: "x" })).toMatch(/^[0-9a-f]{64}$/);
  });

  it("is equal for the same call written differently", () => {
    expect(toolFingerprint("search", { q: nfc, k: 5 })).toBe(toolFingerprint("search", { k: 5, q: nfd }));
  });

  it("differs for different tool names", () => {
    expect(toolFingerprint("search", { q: "x" })).not.toBe(toolFingerprint("read", { q: "x" }));
  });

  it("differs for different inputs", () => {
    expect(toolFingerprint("search", { q: "x" })).not.toBe(toolFingerprint("search", { q: "y" }));
    expect(toolFingerprint("search", { ids: [1, 2] })).not.toBe(toolFingerprint("search", { ids: [2, 1] }));
  });

  it("separates the tool name from the input so the boundary cannot shift", () => {
    // Concatenated without a separator, both would hash the text "a12".
    expect(toolFingerprint("a1", 2)).not.toBe(toolFingerprint("a", 12));
  });

  it("throws on a non-finite number in the input", () => {
    expect(() => toolFingerprint("search", { k: NaN })).toThrow(TypeError);
  });
});

describe("callFingerprint", () => {
  const args = JSON.stringify({ title: "Meeting", body: nfc });

  it("is 64 lowercase hex characters and equal for the same call written differently", () => {
    expect(callFingerprint(1, "save_note", args)).toMatch(/^[0-9a-f]{64}$/);
    expect(callFingerprint(1, "save_note", ` {"body": "${nfd}",  "title":"Meeting"} `)).toBe(callFingerprint(1, "save_note", args));
    expect(callFingerprint(1, "save_note", "")).toBe(callFingerprint(1, "save_note", "{}"));
  });

  it("differs when the step, the tool or the arguments differ", () => {
    const base = callFingerprint(1, "save_note", args);
    expect(callFingerprint(2, "save_note", args)).not.toBe(base);
    expect(callFingerprint(1, "delete_note", args)).not.toBe(base);
    expect(callFingerprint(1, "save_note", JSON.stringify({ title: "Meeting", body: "other" }))).not.toBe(base);
  });

  it("separates step from tool name so the boundary cannot shift", () => {
    expect(callFingerprint(1, "1tool", "{}")).not.toBe(callFingerprint(11, "tool", "{}"));
  });

  it("is not the tool fingerprint of the same input", () => {
    expect(callFingerprint(1, "save_note", args)).not.toBe(toolFingerprint("save_note", JSON.parse(args)));
  });

  it("hashes arguments that are not JSON as text, never equal to a JSON call", () => {
    expect(callFingerprint(1, "save_note", "{not json")).toMatch(/^[0-9a-f]{64}$/);
    expect(callFingerprint(1, "save_note", "{not json")).not.toBe(callFingerprint(1, "save_note", "{}"));
    expect(callFingerprint(1, "save_note", '"{}"')).not.toBe(callFingerprint(1, "save_note", "{}"));
  });
});
