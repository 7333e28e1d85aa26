import { MAX_BODY_DEPTH } from "./json-body";
import { findJsonFault } from "./valid-text";

/** The bound as the body parser applies it: true when the value nests deeper than `max`. */
const nestsDeeperThan = (value: unknown, max: number) => findJsonFault(value, max)?.kind === "too_deep";

const nested = (levels: number, leaf: unknown = 1): unknown => {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
};

describe("findJsonFault: nesting past the bound", () => {
  it("counts arrays and objects, not scalars", () => {
    expect([nestsDeeperThan(1, 0), nestsDeeperThan("x", 0), nestsDeeperThan(null, 0)]).toEqual([false, false, false]);
    expect([nestsDeeperThan([], 0), nestsDeeperThan([], 1), nestsDeeperThan({ a: [1] }, 1), nestsDeeperThan({ a: [1] }, 2)]).toEqual([
      true,
      false,
      true,
      false,
    ]);
  });

  it("finds the deepest branch anywhere", () => {
    expect(nestsDeeperThan({ a: 1, b: [1, 2, { c: nested(MAX_BODY_DEPTH - 2) }] }, MAX_BODY_DEPTH)).toBe(true);
    expect(nestsDeeperThan({ a: 1, b: [1, 2, { c: nested(MAX_BODY_DEPTH - 3) }] }, MAX_BODY_DEPTH)).toBe(false);
  });

  it("walks a value nested far deeper than any stack would take, without recursion", () => {
    expect(nestsDeeperThan(nested(200_000), MAX_BODY_DEPTH)).toBe(true);
  });
});
