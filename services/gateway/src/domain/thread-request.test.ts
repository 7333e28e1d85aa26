import { checkForkRequest, checkThreadTitle, TITLE_MAX_CHARS } from "./thread-request";

describe("a thread's title", () => {
  it.each([["Refunds"], ["😀".repeat(TITLE_MAX_CHARS)], [" a "], [undefined]])("takes %j", (title) => {
    expect(() => checkThreadTitle(title)).not.toThrow();
  });

  it.each([[""], ["   "], ["x".repeat(TITLE_MAX_CHARS + 1)], ["two\nlines"], ["tab\there"], ["bell\u0007"], ["c1\u0085"]])("refuses %j with 422", (title) => {
    expect(() => checkThreadTitle(title)).toThrow(expect.objectContaining({ status: 422, code: 10430 }));
  });
});

describe("a fork request's content", () => {
  const at_run_id = "0b6f1c6e-8d1f-4a57-9a35-5d0c2f3e9a10";

  it("takes a fork with no title or a title a new thread could have", () => {
    expect(() => checkForkRequest({ at_run_id })).not.toThrow();
    expect(() => checkForkRequest({ at_run_id, title: "The other way" })).not.toThrow();
  });

  it.each([[""], [" \t "], ["x".repeat(TITLE_MAX_CHARS + 1)], ["two\nlines"]])("refuses the title %j with 422", (title) => {
    expect(() => checkForkRequest({ at_run_id, title })).toThrow(expect.objectContaining({ status: 422, code: 10430 }));
  });
});
