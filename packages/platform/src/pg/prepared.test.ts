import { preparedStatement } from "./prepared";

describe("preparedStatement", () => {
  it("names its text and passes the values on", () => {
    const byId = preparedStatement("steward.test.by_id", "SELECT $1::int AS id");
    expect(byId([7])).toEqual({ name: "steward.test.by_id", text: "SELECT $1::int AS id", values: [7] });
  });

  it("takes the same name again for the same text, refuses it for another text", () => {
    preparedStatement("steward.test.twice", "SELECT 1");
    expect(() => preparedStatement("steward.test.twice", "SELECT 1")).not.toThrow();
    expect(() => preparedStatement("steward.test.twice", "SELECT 2")).toThrow(/declared twice/);
  });
});
