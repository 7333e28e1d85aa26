import { BadRequestError } from "@steward/platform";
import { CreateRunBody, ListRunsQuery, parseOr400, singleValuedQuery } from "./schemas";

function expect400(fn: () => unknown): BadRequestError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(BadRequestError);
  const error = caught as BadRequestError;
  expect(error.status).toBe(400);
  expect(error.code).toBe(10001);
  return error;
}

describe("CreateRunBody via parseOr400", () => {
  it.each([
    [{ input: "hi" }],
    [{ input: "hi", mode: "agent" }],
    [{ input: "hi", mode: "ask", response_language: "fr" }],
    [{ input: "" }], // content limits are the service layer's (422), not the shape's
  ])("passes the valid body %j through", (body) => {
    expect(parseOr400(CreateRunBody, body, "body")).toEqual(body);
  });

  it.each([
    ["an extra key", { input: "hi", roles: ["admin"] }],
    ["null input", { input: null }],
    ["a missing input", { mode: "agent" }],
    ["a null response_language", { input: "hi", response_language: null }],
    ["an unknown mode", { input: "hi", mode: "other" }],
    ["a numeric input", { input: 42 }],
    ["a body that is not an object", ["hi"]],
    ["no body at all", undefined],
  ])("rejects %s with 400/10001", (_label, body) => {
    expect400(() => parseOr400(CreateRunBody, body, "body"));
  });

  it("names what was malformed and where", () => {
    const error = expect400(() => parseOr400(CreateRunBody, { input: "hi", mode: "other" }, "request body"));
    expect(error.message).toContain("request body is malformed");
    expect(error.message).toContain("/mode");
  });
});

describe("singleValuedQuery", () => {
  it("passes single values through", () => {
    expect(singleValuedQuery({ page: "2", sort: "created_at desc" })).toEqual({ page: "2", sort: "created_at desc" });
  });

  it("treats a missing query as empty", () => {
    expect(singleValuedQuery(undefined)).toEqual({});
  });

  it("rejects a repeated key (an array value) with 400 naming the key", () => {
    const error = expect400(() => singleValuedQuery({ page: ["1", "2"] }));
    expect(error.message).toContain("page");
  });
});

describe("ListRunsQuery", () => {
  const parse = (query: unknown) => parseOr400(ListRunsQuery, singleValuedQuery(query), "query");

  it.each([
    [{}],
    [{ page: "1" }],
    [{ page: "999999999" }],
    [{ page_size: "1" }],
    [{ page_size: "100" }],
    [{ page: "3", page_size: "50", sort: "created_at desc" }],
  ])("accepts %j", (query) => {
    expect(parse(query)).toEqual(query);
  });

  it.each([
    ["page 0", { page: "0" }],
    ["a page with a leading zero", { page: "01" }],
    ["a negative page", { page: "-1" }],
    ["page_size 0", { page_size: "0" }],
    ["page_size 101", { page_size: "101" }],
    ["a non-numeric page_size", { page_size: "abc" }],
    ["ascending sort", { sort: "created_at asc" }],
    ["an unknown key", { limit: "10" }],
    ["a repeated key", { page_size: ["10", "20"] }],
  ])("rejects %s with 400/10001", (_label, query) => {
    expect400(() => parse(query));
  });
});
