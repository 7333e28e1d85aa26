import type { SqlSession } from "../domain/tool";

export interface StoredToolResult {
  readonly resultCode: string;
  readonly result: { result: unknown; evidence: unknown[] };
}

/**
 * A call's record, held for the call: no other caller of the same call gets past `hold` until this one has
 * completed or released it. Exactly one of `complete` and `release` must be called.
 */
export interface HeldRecord {
  /** The result a previous caller kept for this call, if any (then `release`: nothing runs again). */
  readonly stored: StoredToolResult | null;
  /**
   * Runs `work` inside the record's transaction (for an effect that must commit with it) and keeps a
   * successful result with that effect, in the same commit. A failed result is rolled back with its effect:
   * a failed call may be tried again.
   */
  complete(work: (transaction: SqlSession) => Promise<StoredToolResult>): Promise<StoredToolResult>;
  /** Lets the record go and keeps nothing (the call was denied, or had already run). */
  release(): Promise<void>;
}

/** Idempotency records of tool results, by run and fingerprint. */
export interface IdempotencyStore {
  /**
   * Holds the record of one call (a transaction-scoped advisory lock) and reads what it holds. Cheap to
   * start before the call is known to be permitted: it holds a lock, never runs anything.
   */
  hold(runId: string, fingerprint: string, toolName: string): Promise<HeldRecord>;
  /**
   * Whether a record could be held now without waiting for a connection: one is free, or may be opened, and nobody
   * waits for one. A call that need not hold its record yet (one sent held, before its release) holds it early only
   * then, so that calls already released do not queue behind calls still waiting for their release.
   */
  spare(): boolean;
  /** The stored result of a call, if any (a read's record: no lock, nothing to serialise). */
  find(runId: string, fingerprint: string): Promise<StoredToolResult | null>;
  /** Stores a read's successful result; a result already stored for the call is kept. One statement. */
  keep(runId: string, fingerprint: string, toolName: string, value: StoredToolResult): Promise<void>;
}
