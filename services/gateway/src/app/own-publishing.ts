import type { AppendRunEventsInput, AppendRunEventsResult, DirectPublisher } from "@steward/store";

/** How a gateway append of one run is published: by the gateway right after its commit, or by the relays. */
export interface OwnPublishing {
  /** The append's fields that make its copies and commands the gateway's to publish (none without a publisher). */
  readonly fields: Pick<AppendRunEventsInput, "publishDirect" | "directCommands" | "own">;
  /** After the commit: hands the rows kept from the relays to the publisher; the gateway writes no more of the run. */
  handOff(result: AppendRunEventsResult): AppendRunEventsResult;
}

/**
 * The gateway publishes what it writes of a run itself (a new run, an answer, a decision): the copies, then the
 * command vouching for them (docs/architecture.md, "Outbox"). `publisher` is asked once by the caller, so the
 * rows are written for the publisher that sends them; without one (the bus not connected yet) the relays do.
 * What the gateway is still publishing of the run (a run created a moment ago) does not hold these back.
 */
export function ownPublishing(publisher: DirectPublisher | undefined, runId: string): OwnPublishing {
  if (!publisher) return { fields: {}, handOff: (result) => result };
  return {
    fields: { publishDirect: true, directCommands: true, own: publisher.pendingOf(runId) },
    handOff(result) {
      publisher.publish(runId, result.direct, { last: true });
      return result;
    },
  };
}
