import { pairOrder } from "./pair-order";

describe("the order of an A/B pair", () => {
  it("runs the working tree first in odd pairs and the revision first in even ones", () => {
    expect([1, 2, 3, 4].map(pairOrder)).toEqual([
      ["after", "before"],
      ["before", "after"],
      ["after", "before"],
      ["before", "after"],
    ]);
  });

  it("puts each tree first equally often over an even number of pairs", () => {
    const firsts = Array.from({ length: 10 }, (_, i) => pairOrder(i + 1)[0]);
    expect(firsts.filter((s) => s === "after")).toHaveLength(5);
    expect(firsts.filter((s) => s === "before")).toHaveLength(5);
  });

  it("refuses a pair number that is not a whole number from 1", () => {
    for (const bad of [0, -1, 1.5]) expect(() => pairOrder(bad)).toThrow(RangeError);
  });
});
