import type { TSchema } from "@sinclair/typebox";
import type { CreateRunRequest } from "../../domain/run-request";
import { CreateRunBody, ListRunsQuery, validatorCompiler, type SchemaMismatch } from "./schemas";

/** The route validator Fastify runs for a schema: the value back on a match, else the first mismatch. */
function check(schema: TSchema, value: unknown): { value?: unknown; error?: SchemaMismatch[] } {
  const validate = validatorCompiler({ schema, method: "POST", url: "/x", httpPart: "body" }) as (v: unknown) => { value?: unknown; error?: unknown };
  const result = validate(value);
  return { value: result.value, error: result.error as SchemaMismatch[] | undefined };
}

describe("CreateRunBody under the route validator", () => {
  it.each([
    [{ input: "hi" }],
    [{ input: "hi", mode: "agent" }],
    [{ input: "hi", mode: "ask", response_language: "fr" }],
    [{ input: "" }], // content limits are the service layer's (422), not the shape's
  ])("passes the valid body %j through unchanged", (body) => {
    expect(check(CreateRunBody, body)).toEqual({ value: body, error: undefined });
  });

  it.each([
    ["an extra key", { input: "hi", roles: ["admin"] }],
    ["null input", { input: null }],
    ["a missing input", { mode: "agent" }],
    ["a null response_language", { input: "hi", response_language: null }],
    ["an unknown mode", { input: "hi", mode: "other" }],
    ["a numeric input", { input: 42 }],
    ["a body that is not an object", ["hi"]],
    ["no body at all (Fastify passes null)", null],
  ])("refuses %s", (_label, body) => {
    expect(check(CreateRunBody, body).error).toHaveLength(1);
  });

  it("names where the first mismatch is", () => {
    expect(check(CreateRunBody, { input: "hi", mode: "other" }).error?.[0].instancePath).toBe("/mode");
    expect(check(CreateRunBody, { input: "hi", roles: [] }).error?.[0].instancePath).toBe("/roles");
  });

  it("describes the domain's CreateRunRequest, field for field (checked by the compiler)", () => {
    const same: [CreateRunBody, CreateRunRequest] extends [CreateRunRequest, CreateRunBody] ? true : false = true;
    expect(same).toBe(true);
  });
});

describe("ListRunsQuery under the route validator", () => {
  it.each([
    [{}],
    [{ page: "1" }],
    [{ page: "999999999" }],
    [{ page_size: "1" }],
    [{ page_size: "100" }],
    [{ page: "3", page_size: "50", sort: "created_at desc" }],
  ])("accepts %j as the strings it holds (nothing coerced or defaulted)", (query) => {
    expect(check(ListRunsQuery, query).value).toEqual(query);
  });

  it.each([
    ["page 0", { page: "0" }],
    ["a page with a leading zero", { page: "01" }],
    ["a negative page", { page: "-1" }],
    ["page_size 0", { page_size: "0" }],
    ["page_size 101", { page_size: "101" }],
    ["a non-numeric page_size", { page_size: "abc" }],
    ["a number where a string is due (no coercion)", { page: 1 }],
    ["ascending sort", { sort: "created_at asc" }],
    ["an unknown key", { limit: "10" }],
    ["a repeated key", { page_size: ["10", "20"] }],
  ])("refuses %s", (_label, query) => {
    expect(check(ListRunsQuery, query).error).toHaveLength(1);
  });
});
