/** Governed memory's limits (SPEC §9), code constants like the run's: not settings. */
export const ProposalLimits = {
  /** Proposals one run may make, whatever became of them. */
  perRun: 2,
  /** Proposals of one thread waiting for a person's decision. */
  pendingPerThread: 5,
  /**
   * Proposals waiting for a person's decision from one member's runs outside any thread (a question asked alone,
   * an MCP invocation): the same bound as a thread's, so making a run per call gains nothing.
   */
  pendingPerMemberOutsideThreads: 5,
} as const;

/** The result codes of propose_knowledge besides `ok` (docs/memory.md). */
export const ProposalResultCode = {
  /** A limit is reached: nothing was queued; the model should not try again in this run. */
  limitReached: "PROPOSAL_LIMIT_REACHED",
  /** The proposal carries SQL, an internal table or cache name, or a secret: nothing was stored. */
  rejected: "PROPOSAL_REJECTED",
} as const;
