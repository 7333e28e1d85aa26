import { isPostgresUnavailable } from "./transient";

describe("isPostgresUnavailable", () => {
  it.each([
    [{ code: "57P01", message: "terminating connection due to administrator command" }],
    [{ code: "57P03", message: "the database system is starting up" }],
    [{ code: "08006", message: "connection failure" }],
    [{ code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:5432" }],
    [new Error("Connection terminated unexpectedly")],
    [new Error("timeout exceeded when trying to connect")],
  ])("says the server is away for %p", (err) => {
    expect(isPostgresUnavailable(err)).toBe(true);
  });

  it.each([
    [{ code: "23505", message: "duplicate key value violates unique constraint" }],
    [{ code: "40001", message: "could not serialize access" }],
    [new Error("stored policy set no longer validates")],
    [null],
    ["57P01"],
  ])("does not for a statement that failed on its merits: %p", (err) => {
    expect(isPostgresUnavailable(err)).toBe(false);
  });
});
