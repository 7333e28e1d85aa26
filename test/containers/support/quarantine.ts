// A scenario that has shown a defect not fixed yet runs only with STEWARD_RUN_QUARANTINED=1; otherwise it is
// reported as skipped (jest counts it, npm test prints the count). Each one names its defect and where it is
// written up (docs/operations.md, "Known defects"). Never a way to hide a failure: a scenario leaves
// quarantine when its defect is fixed, and the note of the issue that tracks it says so.
export const runQuarantined = process.env.STEWARD_RUN_QUARANTINED === "1";

export function quarantined(defect: string): jest.It {
  if (!runQuarantined) console.info(`quarantined scenario skipped (known defect: ${defect}); STEWARD_RUN_QUARANTINED=1 runs it`);
  return runQuarantined ? it : it.skip;
}
