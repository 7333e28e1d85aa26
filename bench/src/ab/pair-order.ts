/** Which tree runs first in an A/B pair. */
export type Side = "after" | "before";

/**
 * The order of pair `pair` (from 1): the working tree first in odd pairs, the revision first in even ones. A
 * bench run can depend on its place in a pair (on the path, the second run of a pair was the faster in 4 of 5 pairs,
 * whichever tree it was), so each tree goes first as often as the other over an even number of pairs.
 */
export function pairOrder(pair: number): readonly [Side, Side] {
  if (!Number.isInteger(pair) || pair < 1) throw new RangeError(`pair numbers start at 1, not ${pair}`);
  return pair % 2 === 1 ? ["after", "before"] : ["before", "after"];
}
