import { checkThreadTitle, TITLE_MAX_CHARS } from "./thread-request";

describe("a thread's title", () => {
  it.each([["Refunds"], ["😀".repeat(TITLE_MAX_CHARS)], [" a "], [undefined]])("takes %j", (title) => {
    expect(() => checkThreadTitle(title)).not.toThrow();
  });

  it.each([[""], ["   "], ["x".repeat(TITLE_MAX_CHARS + 1)], ["two\nlines"], ["tab\there"], ["bell\u0007"], ["c1\u0085"]])("refuses %j with 422", (title) => {
    expect(() => checkThreadTitle(title)).toThrow(expect.objectContaining({ status: 422, code: 10430 }));
  });
});
