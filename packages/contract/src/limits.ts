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

/**
 * How large an event may be (SPEC §10: every event fits the bus). Code constants, like the run's limits.
 * An event's size is the UTF-8 length of the JSON of its `type` and `data` (see `eventBytes`).
 */
export const PayloadLimits = {
  /**
   * The largest event, in bytes: 256 KiB. The bus copy adds its metadata and headers, and PostgreSQL's jsonb
   * text form (a space after each `:` and `,`) at most half again, so a copy stays far below NATS's 1 MiB.
   */
  eventBytes: 256 * 1024,
  /**
   * The largest tool result (the JSON of its `result`, `evidence` and `next_state`) tool-exec hands over, in
   * bytes: 192 KiB, leaving 64 KiB of the event for the tool_result's other fields.
   */
  toolResultBytes: 192 * 1024,
} as const;

/** An event's size as `PayloadLimits.eventBytes` counts it: UTF-8 bytes of the JSON of `{type, data}`. */
export function eventBytes(event: { readonly type: string; readonly data: unknown }): number {
  return Buffer.byteLength(JSON.stringify({ type: event.type, data: event.data }), "utf8");
}
