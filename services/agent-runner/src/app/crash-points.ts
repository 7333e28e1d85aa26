/** Places in the loop where a test may kill the runner, to prove that a run resumes from its events. */
export const crashPointNames = ["before_model", "after_model", "during_tool", "after_tool"] as const;
export type CrashPoint = (typeof crashPointNames)[number];

export interface CrashPoints {
  reached(point: CrashPoint): void;
}

/** Production: nothing happens. */
export const noCrashPoints: CrashPoints = { reached: () => undefined };

/**
 * Test mode only: SIGKILL this process the first time `point` is reached (for `during_tool`, shortly after
 * the call was sent, so that tool-exec is running the tool when the runner dies).
 */
export function killAt(point: CrashPoint, duringToolDelayMs = 50): CrashPoints {
  let fired = false;
  return {
    reached(at) {
      if (fired || at !== point) return;
      fired = true;
      const kill = () => process.kill(process.pid, "SIGKILL");
      if (at === "during_tool") setTimeout(kill, duringToolDelayMs);
      else kill();
    },
  };
}
