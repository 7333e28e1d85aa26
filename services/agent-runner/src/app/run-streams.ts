import type { RunEvent, RunState, StoredRunEvent } from "@steward/contract";

/**
 * The event store as the loop uses it (`createRunStreams` in @steward/store, wired in main.ts): open the run it was
 * handed, read it, append to it. How and when the appends' copies reach the bus (the loop's own publishing, their
 * marks, the relays) happens behind it.
 */
export interface RunStreams {
  open(run: {
    readonly runId: string;
    readonly tenantId: string;
    readonly traceparent?: string;
    /** The run's events as the claim read them: the first `read` answers with them. */
    readonly events?: readonly StoredRunEvent[];
    /** What the delivery said of the run's earlier events (`RunContext`): whether the loop may publish its own. */
    readonly firstDelivery?: boolean;
    readonly publishedThrough?: string;
  }): RunStream;
}

/** One run's stream, for one drive. */
export interface RunStream {
  /** The run's events in version order: those it was opened with the first time, else as stored now. */
  read(): Promise<StoredRunEvent[]>;
  /**
   * Appends `events` at `state.version`, `folded` being the run folded through them: resolves once committed with
   * the events as stored; a ConcurrencyError when another writer appended first.
   */
  append(state: RunState, events: readonly RunEvent[], more?: { readonly folded?: RunState }): Promise<{ readonly events: StoredRunEvent[] }>;
  /** The writer is done with the run (the drive is over). */
  close(): void;
}
