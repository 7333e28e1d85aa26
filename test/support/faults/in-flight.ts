/**
 * The precondition of a fault under load: at least half of the runs are still in flight when the fault is due.
 * Submitted one after another, the first runs may end before the last has started on a loaded machine; the fault
 * must still hit most of them. Returns how many are in flight, or throws a setup error saying so.
 */
export function enoughInFlight(runs: number, ended: number): number {
  const inFlight = runs - ended;
  if (inFlight < runs / 2) throw new Error(`setup: only ${inFlight} of ${runs} runs in flight when the fault was due`);
  return inFlight;
}
