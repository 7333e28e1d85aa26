import { ValidationError } from "@steward/platform";
import { INPUT_MAX_CHARS, LANGUAGE_MAX_CHARS, checkRunContent, codePointLength } from "./run-request";

const emoji = "\u{1F600}"; // one code point, two UTF-16 units
const astral = "\u{20BB7}"; // 𠮷, a CJK ideograph outside the BMP

function rejection(body: { input: string; response_language?: string }): ValidationError {
  try {
    checkRunContent(body);
  } catch (error) {
    return error as ValidationError;
  }
  throw new Error("expected checkRunContent to throw");
}

describe("codePointLength", () => {
  it("counts astral characters once, not per UTF-16 unit", () => {
    expect(emoji.length).toBe(2);
    expect(codePointLength(emoji)).toBe(1);
    expect(codePointLength(`a${astral}b${emoji}`)).toBe(4);
    expect(codePointLength("")).toBe(0);
  });
});

describe("checkRunContent", () => {
  it("uses the SPEC limits", () => {
    expect(INPUT_MAX_CHARS).toBe(4000);
    expect(LANGUAGE_MAX_CHARS).toBe(35);
  });

  it("accepts 4000 emoji (8000 UTF-16 units)", () => {
    expect(() => checkRunContent({ input: emoji.repeat(4000) })).not.toThrow();
  });

  it("accepts 4000 astral ideographs", () => {
    expect(() => checkRunContent({ input: astral.repeat(4000) })).not.toThrow();
  });

  it("rejects 4001 emoji", () => {
    expect(() => checkRunContent({ input: emoji.repeat(4001) })).toThrow(ValidationError);
  });

  it("rejects 4001 ASCII characters and accepts 4000", () => {
    expect(() => checkRunContent({ input: "a".repeat(4000) })).not.toThrow();
    expect(() => checkRunContent({ input: "a".repeat(4001) })).toThrow(ValidationError);
  });

  it("rejects an empty input", () => {
    expect(() => checkRunContent({ input: "" })).toThrow(ValidationError);
  });

  it.each([" ", "   ", "\n\t \u3000", "\u00a0\r\n"])("rejects the white-space-only input %j", (input) => {
    expect(() => checkRunContent({ input })).toThrow(ValidationError);
  });

  it("accepts input with surrounding white space and some content", () => {
    expect(() => checkRunContent({ input: "\n  hello \u3000" })).not.toThrow();
  });

  it("accepts a response_language of 1 and of 35 code points, and none at all", () => {
    expect(() => checkRunContent({ input: "hi" })).not.toThrow();
    expect(() => checkRunContent({ input: "hi", response_language: "x" })).not.toThrow();
    expect(() => checkRunContent({ input: "hi", response_language: "x".repeat(35) })).not.toThrow();
    expect(() => checkRunContent({ input: "hi", response_language: emoji.repeat(35) })).not.toThrow();
  });

  it("rejects an empty response_language and one of 36 code points", () => {
    expect(() => checkRunContent({ input: "hi", response_language: "" })).toThrow(ValidationError);
    expect(() => checkRunContent({ input: "hi", response_language: "x".repeat(36) })).toThrow(ValidationError);
    expect(() => checkRunContent({ input: "hi", response_language: emoji.repeat(36) })).toThrow(ValidationError);
  });

  it("throws a ValidationError with status 422 and code 10430", () => {
    for (const body of [{ input: "" }, { input: " \t" }, { input: "hi", response_language: "" }]) {
      const error = rejection(body);
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.status).toBe(422);
      expect(error.code).toBe(10430);
      expect(error.message.length).toBeGreaterThan(0);
    }
  });
});
