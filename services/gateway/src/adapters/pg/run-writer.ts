import { foldRun, initialRunState } from "@steward/contract";
import { createBatcher, oneStatementOrEachAlone, type Pool } from "@steward/platform";
import {
  addRunToThread,
  assertEventsFit,
  createRunStreams,
  createRuns,
  findByIdempotencyKey,
  findOwnRun,
  ownPublishing,
  readStream,
  type DirectPublisher,
  type NewRunInput,
  type NewRunOutcome,
} from "@steward/store";
import type { RunWriter } from "../../app/ports";

/** Most new runs written by one statement; the rest go in the next. */
const NEW_RUNS_PER_STATEMENT = 32;
/** Statements writing new runs at once (each on a connection of its own). */
const NEW_RUN_WRITES_IN_FLIGHT = 2;

/**
 * The gateway's runs in the event store. What it writes of a run hands the run to a runner, and the gateway
 * publishes it itself right after the commit while it has a publisher (`publisher`: set once the bus is connected):
 * the copies, then the command vouching for them; a cancel, and everything while there is no publisher, goes by the
 * relays (docs/architecture.md, "Outbox relay").
 *
 * No statement of its own per created run: the runs asked for while a write is in flight are written together by
 * the next one (at most 32, at most two writes at once; `createRuns`), and each caller is answered once the
 * statement holding its run has committed. A quiet caller waits for no timer; data PostgreSQL refuses fails its own
 * run only.
 */
export function createPgRunWriter(deps: { pool: Pool; namespace: string; publisher?: () => DirectPublisher | undefined }): RunWriter {
  const publisherNow = deps.publisher ?? (() => undefined);
  const streams = createRunStreams({ pool: deps.pool, namespace: deps.namespace, publisher: publisherNow, handsOver: true });
  const newRuns = createBatcher<NewRunInput, NewRunOutcome>((batch) => oneStatementOrEachAlone(batch, (some) => createRuns(deps.pool, some)), {
    maxBatch: NEW_RUNS_PER_STATEMENT,
    maxInFlight: NEW_RUN_WRITES_IN_FLIGHT,
  });
  return {
    async load(owner, runId) {
      const own = await findOwnRun(deps.pool, owner, runId);
      if (!own) return null;
      return foldRun(await readStream(deps.pool, runId));
    },
    async append(state, write) {
      const stream = streams.open({ runId: write.runId, tenantId: write.tenantId, traceparent: write.traceparent });
      try {
        return (await stream.append(state, write.events, { commands: write.commands })).state;
      } finally {
        stream.close();
      }
    },
    async create(run) {
      assertEventsFit(run.runId, run.events);
      const publishing = ownPublishing(publisherNow(), run.runId);
      const outcome = await newRuns.submit({ ...run, namespace: deps.namespace, ...publishing.fields });
      if (outcome.kind !== "created") return outcome;
      return { kind: "created", state: publishing.handOff(outcome.appended).state };
    },
    async addToThread(threadId, owner, run, addedAt) {
      const publishing = ownPublishing(publisherNow(), run.runId);
      const append = { ...run, state: initialRunState, namespace: deps.namespace, ...publishing.fields };
      const outcome = await addRunToThread(deps.pool, { threadId, owner, run: append, addedAt });
      if (outcome.kind !== "added") return outcome;
      return { kind: "added", state: publishing.handOff(outcome.run).state };
    },
    findByIdempotencyKey: (owner, key) => findByIdempotencyKey(deps.pool, owner, key),
  };
}
