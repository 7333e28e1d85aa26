/** Run error codes (SPEC §3, §7). A run that fails carries exactly one of these in `error.code`. */
export const RunErrorCode = {
  modelUnavailable: 60300,
  modelTruncated: 60301,
  outputUnparseable: 60302,
  unknownTool: 60200,
  cycleDetected: 60400,
  stepBudgetSpent: 60401,
  deadlinePassed: 60402,
  circuitOpen: 60403,
  cancelled: 60405,
  questionUnanswered: 60406,
  policyDenied: 60500,
  elevationInvalid: 60501,
  pdpUnavailable: 60502,
  /** A policy of the set failed to evaluate (e.g. integer overflow): a deny, whatever the policy's effect. */
  policyEvaluationError: 60503,
} as const;

/** Result codes a tool call can carry besides a numeric run code. */
export const ToolResultCode = {
  ok: "ok",
  toolFailed: "60302",
  circuitOpen: "60403",
  askModeDenied: "ASK_MODE_DENIED",
  explorationBudgetReached: "EXPLORATION_BUDGET_REACHED",
  rejectedByUser: "REJECTED_BY_USER",
  toolNotAvailable: "TOOL_NOT_AVAILABLE",
  invalidArguments: "INVALID_ARGUMENTS",
  outcomeUnknown: "OUTCOME_UNKNOWN",
} as const;

/** The exploration protocol (SPEC §4): the marker and the two options of the question the model must ask. */
export const Exploration = {
  marker: "[[EXPLORATION_BUDGET]]",
  continueOption: "Continue exploring",
  stopOption: "Stop for now",
} as const;
