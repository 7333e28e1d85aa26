/**
 * The run's limits (SPEC §3). Code constants on purpose: a deployment cannot loosen them by configuration.
 */
export const Limits = {
  /** Model calls a run may make. */
  stepBudget: 25,
  /** Seconds from `created_at` to `deadline_at`. */
  deadlineSeconds: 180,
  /** Cycle detection looks for periods of 1 to 4 tool calls ... */
  cycleMinPeriod: 1,
  cycleMaxPeriod: 4,
  /** ... repeated this many times in a row. */
  cycleRepeats: 3,
  /** Consecutive failures of one tool that open its circuit for the rest of the run. */
  circuitThreshold: 3,
  /** Seconds an `ask_user` question waits for an answer. */
  askUserWaitSeconds: 300,
  /** Exploration tool calls a run may make before it must ask the user whether to go on. */
  explorationBudget: 7,
  /** Continuations appended after a length stop. */
  maxAutoContinuations: 2,
} as const;
