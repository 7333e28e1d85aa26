import { parseAdminReadQuery, parseAdminRunQuery, parseInstant } from "./admin-run-filter";

const badRequest = expect.objectContaining({ status: 400, code: 10001 });

describe("an instant of the admins' time filters", () => {
  it.each([
    ["2026-12-01T09:00:00Z", "2026-12-01T09:00:00.000000Z"],
    ["2026-12-01T09:00:00.5Z", "2026-12-01T09:00:00.500000Z"],
    ["2026-12-01T09:00:00.123456Z", "2026-12-01T09:00:00.123456Z"],
    ["2026-12-01T10:30:00.000001+01:30", "2026-12-01T09:00:00.000001Z"],
    ["2026-12-01T01:00:00-02:00", "2026-12-01T03:00:00.000000Z"],
    ["2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00.000000Z"],
    ["2026-12-01", "2026-12-01T00:00:00.000000Z"],
    ["2024-02-29", "2024-02-29T00:00:00.000000Z"],
    ["0050-06-01T00:00:00Z", "0050-06-01T00:00:00.000000Z"],
  ])("reads %s as %s", (text, iso) => {
    expect(parseInstant("created_after", text)).toBe(iso);
  });

  it.each([
    ["a local time (no zone)", "2026-12-01T09:00:00"],
    ["no seconds", "2026-12-01T09:00Z"],
    ["seven fractional digits", "2026-12-01T09:00:00.1234567Z"],
    ["February 29 of a common year", "2026-02-29"],
    ["month 13", "2026-13-01"],
    ["day 0", "2026-12-00"],
    ["hour 24", "2026-12-01T24:00:00Z"],
    ["a leap second", "2026-12-31T23:59:60Z"],
    ["an offset of 24 hours", "2026-12-01T09:00:00+24:00"],
    ["year 0", "0000-01-01"],
    ["before year 1 in UTC", "0001-01-01T00:00:00+01:00"],
    ["a space for T", "2026-12-01 09:00:00Z"],
    ["a number", "1764579600"],
    ["words", "yesterday"],
    ["nothing", ""],
  ])("refuses %s with 400", (_, text) => {
    expect(() => parseInstant("created_before", text)).toThrow(badRequest);
  });

  it("names the key in the detail", () => {
    expect(() => parseInstant("created_before", "soon")).toThrow(/^created_before must be/);
  });
});

describe("the query of GET /v1/admin/runs", () => {
  it("defaults to the first page of 20 and filters nothing", () => {
    expect(parseAdminRunQuery({})).toEqual({ filter: {}, page: 1, pageSize: 20, understood: { page: 1, page_size: 20 } });
  });

  it("reads every filter and the page; the audit record keeps them in the API's words, times canonical", () => {
    const thread = "3d1b7c2a-5e8f-4a90-b1c2-7f6e5d4c3b2a";
    expect(
      parseAdminRunQuery({
        page: "3",
        page_size: "5",
        user: "ana",
        state: "failed",
        code: "60200",
        created_after: "2026-12-01",
        created_before: "2026-12-01T12:00:00+02:00",
        thread_id: thread,
      }),
    ).toEqual({
      filter: {
        user: "ana",
        state: "failed",
        code: 60200,
        createdAfter: "2026-12-01T00:00:00.000000Z",
        createdBefore: "2026-12-01T10:00:00.000000Z",
        threadId: thread,
      },
      page: 3,
      pageSize: 5,
      understood: {
        user: "ana",
        state: "failed",
        code: 60200,
        created_after: "2026-12-01T00:00:00.000000Z",
        created_before: "2026-12-01T10:00:00.000000Z",
        thread_id: thread,
        page: 3,
        page_size: 5,
      },
    });
  });

  it("takes one bound alone", () => {
    expect(parseAdminRunQuery({ created_before: "2026-12-01" }).filter).toEqual({ createdBefore: "2026-12-01T00:00:00.000000Z" });
  });

  it.each([
    ["an empty range", { created_after: "2026-12-01T09:00:00Z", created_before: "2026-12-01T09:00:00Z" }],
    ["an inverted range", { created_after: "2026-12-02", created_before: "2026-12-01" }],
    ["the same instant in two zones", { created_after: "2026-12-01T10:00:00+01:00", created_before: "2026-12-01T09:00:00Z" }],
    ["a bad bound", { created_after: "2026-12-01T09:00:00" }],
  ])("refuses %s with 400", (_, query) => {
    expect(() => parseAdminRunQuery(query)).toThrow(badRequest);
  });
});

describe("the query of GET /v1/audit/admin-reads", () => {
  it("reads its filters and page", () => {
    const run = "0b6f1c6e-8d1f-4a57-9a35-5d0c2f3e9a10";
    expect(parseAdminReadQuery({})).toEqual({ filter: {}, page: 1, pageSize: 20 });
    expect(parseAdminReadQuery({ user: "root", run_id: run, page: "2", page_size: "100" })).toEqual({
      filter: { user: "root", runId: run },
      page: 2,
      pageSize: 100,
    });
  });
});
