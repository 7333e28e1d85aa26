import type { DirectPublisher } from "../outbox/direct-publisher";
import type { AppendRunEventsInput, AppendRunEventsResult } from "./append-run-events";

/** How one write of a run that hands it to a runner is published: by its writer right after the commit, or by the relays. */
export interface OwnPublishing {
  /** The write's fields that make its copies and commands the writer's to publish (none without a publisher). */
  readonly fields: Pick<AppendRunEventsInput, "publishDirect" | "directCommands" | "own">;
  /** After the commit: hands the rows kept from the relays to the publisher; the writer writes no more of the run. */
  handOff<R extends Pick<AppendRunEventsResult, "direct">>(result: R): R;
}

/**
 * A writer that hands a run to a runner (the gateway: a new run, an answer, a decision) publishes what it writes
 * itself: the copies, then the command vouching for them (docs/architecture.md, "Outbox relay"). `publisher` is asked
 * once by the caller, so the rows are written for the publisher that sends them; without one (the bus not connected
 * yet) the relays do. What the writer is still publishing of the run (a run created a moment ago) does not hold
 * these back.
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
