import { createHash } from "node:crypto";
import {
  Limits,
  busNames,
  canonicalJson,
  decide,
  initialRunState,
  nowMicros,
  parseMicros,
  runRequestedMessage,
  snapshotOf,
  type QueueRun,
  type RunInvocation,
  type RunSnapshot,
} from "@steward/contract";
import { ConflictError, NotFoundError, ValidationError, timeOrderedId } from "@steward/platform";
import { checkRunContent, type CreateRunRequest } from "../domain/run-request";
import type { PendingPermit } from "./gateway-decisions";
import type { NewRun, RunWriter } from "./ports";
import type { Principal } from "../domain/principal";

export interface CreateRunCommand {
  readonly principal: Principal;
  readonly body: CreateRunRequest;
  readonly idempotencyKey?: string;
  readonly elevationSessionId?: string;
  readonly traceparent: string;
  /** The MCP session that starts the run (run_question, invoke_capability) and its mode: recorded in its run.queued event. */
  readonly mcpSessionId?: string;
  readonly mcpMode?: string;
  /** A capability invoked directly (invoke_capability): the run makes these calls without a model (docs/mcp.md). */
  readonly invocation?: RunInvocation;
  /**
   * The route's permit, its record not yet written: committed with the new run, or written alone before the
   * answer when no run is inserted (a retry answered with the run created first, a refusal).
   */
  readonly permit?: PendingPermit | null;
}

/**
 * Creates a run: one timestamp (µs, UTC) for created_at, deadline +180 s, and in one transaction the run
 * row, its run.queued event and the outbox record of agent.run.requested. With an Idempotency-Key, a retry
 * of the same request returns the run created first; the same key with another body is refused.
 *
 * No statement of its own per created run, with or without a key: the runs asked for while a write is in flight
 * are written together by the next one (`RunWriter.create`). The key is not looked up first: a key used before makes
 * the insert skip that run alone, and the run created first is answered (or the request refused when its body differs).
 *
 * With a `thread_id` the run continues the caller's thread: in one transaction that locks the thread's row, the
 * thread must be the caller's (else 404), not archived and without a run still active (else 409), and the run
 * is queued and added to the thread's stream (docs/threads.md).
 *
 * The run.queued copy and the command reach the bus behind `runs`: the gateway publishes them itself once the bus is
 * connected, so a runner has the run without a relay being woken (docs/architecture.md, "Outbox relay").
 */
export function createRunHandler(deps: { runs: RunWriter; namespace: string; clock?: () => string; deadlineSeconds?: number }) {
  const clock = deps.clock ?? nowMicros;
  const deadlineSeconds = deps.deadlineSeconds ?? Limits.deadlineSeconds;
  const names = busNames(deps.namespace);

  /**
   * Writes a new run with its permit's record. A permit decided on remembered roles holds only while the member
   * still holds them: when the statement finds them changed it skips the run, and the run is written once more
   * with the permit decided again on the roles read now (a deny is recorded and refused there).
   */
  async function written(run: NewRun, permit: OwedRecord) {
    for (;;) {
      const outcome = await deps.runs.create({ ...run, permitRecord: permit.row(), permitRoles: permit.rememberedRoles() });
      if (outcome.kind === "created") permit.committed();
      if (outcome.kind !== "roles_changed") return outcome;
      await permit.renew();
    }
  }

  async function replayed(cmd: CreateRunCommand, requestHash: string | null): Promise<RunSnapshot | null> {
    if (!cmd.idempotencyKey) return null;
    const found = await deps.runs.findByIdempotencyKey({ tenantId: cmd.principal.tenantId, userId: cmd.principal.userId }, cmd.idempotencyKey);
    if (!found) return null;
    if (found.requestHash !== requestHash) {
      throw new ValidationError("this Idempotency-Key was already used with a different request");
    }
    return found.snapshot;
  }

  /** The run once added to the thread, or the run created first with its Idempotency-Key (a retry). */
  async function inThread(cmd: CreateRunCommand, threadId: string, run: NewRun, createdAt: string, requestHash: string | null): Promise<RunSnapshot> {
    const owner = { tenantId: cmd.principal.tenantId, userId: cmd.principal.userId };
    const outcome = await deps.runs.addToThread(threadId, owner, run, createdAt);
    switch (outcome.kind) {
      case "added":
        return snapshotOf(run.runId, outcome.state);
      case "not_found":
        throw new NotFoundError("thread not found");
      case "archived":
        throw new ConflictError("the thread is archived: it takes no new run");
      case "active_run":
        throw new ConflictError("a run of this thread is still active: wait for it to end (or cancel it)");
      case "key_used": {
        const first = await replayed(cmd, requestHash);
        if (first) return first;
        throw new ConflictError("this Idempotency-Key names a run that is gone");
      }
      default: {
        const unknown: never = outcome;
        throw new TypeError(`unknown outcome ${(unknown as { kind: string }).kind}`);
      }
    }
  }

  return async function createRun(cmd: CreateRunCommand): Promise<RunSnapshot> {
    const permit = owedRecord(cmd.permit ?? null);
    try {
      return await created(cmd, permit);
    } catch (err) {
      // No run was inserted with the record: it is written alone, and the refusal stands whatever becomes of it.
      await permit.writeAlone().catch(() => undefined);
      throw err;
    }
  };

  async function created(cmd: CreateRunCommand, permit: OwedRecord): Promise<RunSnapshot> {
    checkRunContent(cmd.body);
    // An invocation is part of the request: the same key with another capability or arguments is refused.
    const hashed = cmd.invocation ? { body: cmd.body, invocation: cmd.invocation } : cmd.body;
    // Kept only to tell a retry from another request under the same key: no key, nothing to compare it with.
    const requestHash = cmd.idempotencyKey ? createHash("sha256").update(canonicalJson(hashed)).digest("hex") : null;
    const runId = timeOrderedId();
    const createdAt = clock();
    // No roles are written here: the membership is the PDP's fact, seeded at the user's first decision and
    // changed only by administrators (a token re-sent with each run must not undo a revocation).
    const queue: QueueRun = {
      kind: "queue",
      run: { id: runId, tenantId: cmd.principal.tenantId },
      input: cmd.body.input,
      mode: cmd.body.mode ?? "agent",
      responseLanguage: cmd.body.response_language ?? null,
      createdBy: cmd.principal.userId,
      threadId: cmd.body.thread_id ?? null,
      elevationSessionId: cmd.elevationSessionId ?? null,
      mcpSessionId: cmd.mcpSessionId,
      mcpMode: cmd.mcpMode,
      invocation: cmd.invocation,
      deadlineSeconds,
    };
    const decision = decide(queue, initialRunState, { now: parseMicros(createdAt) });
    const run: NewRun = {
      runId,
      tenantId: cmd.principal.tenantId,
      events: decision.events,
      commands: decision.commands.map((request) => runRequestedMessage(names, request, cmd.traceparent)),
      traceparent: cmd.traceparent,
      idempotencyKey: cmd.idempotencyKey ?? null,
      requestHash,
    };
    if (cmd.body.thread_id) {
      // A thread's run is added in a transaction of its own: the permit's record goes first, alone.
      await permit.writeAlone();
      return inThread(cmd, cmd.body.thread_id, run, createdAt, requestHash);
    }
    const outcome = await written(run, permit);
    if (outcome.kind === "created") return snapshotOf(runId, outcome.state);
    // The key was used before (a retry, or two retries racing): answer with the run created first, once the
    // permit that answer rests on is recorded.
    const winner = await replayed(cmd, requestHash);
    if (!winner) throw new ConflictError("this Idempotency-Key names a run that is gone");
    await permit.writeAlone();
    return winner;
  }
}

export type CreateRun = ReturnType<typeof createRunHandler>;

/** A permit's record until it is written, once: with the run's statement or alone. */
interface OwedRecord {
  /** The record as a row for the run's statement, or null when none is owed. */
  row(): Readonly<Record<string, unknown>> | null;
  /** The roles the owed permit was decided on from memory, or null. */
  rememberedRoles(): readonly string[] | null;
  /** The run's statement committed it. */
  committed(): void;
  /** Writes it alone if still owed. */
  writeAlone(): Promise<void>;
  /** Its roles changed before it was written: the permit decided again takes its place (a deny throws). */
  renew(): Promise<void>;
}

function owedRecord(permit: PendingPermit | null): OwedRecord {
  let owed = permit;
  return {
    row: () => owed?.row ?? null,
    rememberedRoles: () => owed?.rememberedRoles ?? null,
    committed: () => {
      owed = null;
    },
    async writeAlone() {
      const pending = owed;
      owed = null;
      await pending?.write();
    },
    async renew() {
      const stale = owed;
      owed = null; // a deny is recorded by the renewal itself: nothing is owed then
      if (stale) owed = await stale.renew();
    },
  };
}
