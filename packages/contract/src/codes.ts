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

/** The `code` of the REST API's problem answers (SPEC §7), one per HTTP status the gateway answers with. */
export const ApiErrorCode = {
  malformed: 10001,
  unauthenticated: 10011,
  forbidden: 10031,
  notFound: 10050,
  wrongState: 10090,
  /** The request was not received within the server's request timeout. */
  requestTimeout: 10408,
  bodyTooLarge: 10413,
  unsupportedMediaType: 10415,
  /** Too many requests: a per-tenant, per-user or per-address limit was reached; `Retry-After` says when to retry. */
  rateLimited: 10429,
  /** An `Expect` other than 100-continue. */
  expectationFailed: 10417,
  /** The request line and headers exceed the server's limit. */
  headersTooLarge: 10431,
  invalidContent: 10430,
  internal: 10500,
  unavailable: 10503,
} as const;
