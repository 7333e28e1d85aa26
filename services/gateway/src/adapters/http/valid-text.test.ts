import { findInvalidText } from "./valid-text";

describe("findInvalidText", () => {
  it.each([
    ["plain text", { input: "hello" }],
    ["a surrogate pair (an emoji)", { input: "ok \uD83D\uDE00" }],
    ["non-string values", { n: 1, b: true, z: null, list: [1, "x"] }],
  ])("passes %s", (_label, value) => {
    expect(findInvalidText(value)).toBeNull();
  });

  it.each([
    ["a lone high surrogate", { input: "\uD800" }, "/input"],
    ["a lone low surrogate", { input: "a\uDC00b" }, "/input"],
    ["a reversed pair", { input: "\uDE00\uD83D" }, "/input"],
    ["NUL", { input: "a\u0000b" }, "/input"],
    ["a nested string", { a: [{ b: "ok" }, { c: "\uD800" }] }, "/a/1/c"],
    ["a key", { "\uD800": "x" }, "/\uFFFD"],
    ["a bare string", "\uDBFF", "/"],
  ])("finds %s", (_label, value, path) => {
    expect(findInvalidText(value)).toBe(path);
  });

  it("walks deep nesting without exhausting the stack", () => {
    let deep: unknown = "\uD800";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findInvalidText(deep)).toMatch(/^(\/0){100000}$/);
  });
});
