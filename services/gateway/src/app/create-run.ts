import { createHash, randomUUID } from "node:crypto";
import {
  Limits,
  addSeconds,
  busNames,
  canonicalJson,
  initialRunState,
  nowMicros,
  snapshotOf,
  type RunRequested,
  type RunSnapshot,
} from "@steward/contract";
import { ValidationError, type Pool } from "@steward/platform";
import { appendRunEvents, findByIdempotencyKey } from "@steward/store";
import { checkRunContent } from "../domain/run-request";
import type { Principal } from "../adapters/http/auth";
import type { CreateRunBody } from "../adapters/http/schemas";

export interface CreateRunCommand {
  readonly principal: Principal;
  readonly body: CreateRunBody;
  readonly idempotencyKey?: string;
  readonly elevationSessionId?: string;
  readonly traceparent: string;
}

const UNIQUE_VIOLATION = "23505";

/**
 * Creates a run: one timestamp (µs, UTC) for created_at, deadline +180 s, and in one transaction the run
 * row, its run.queued event and the outbox record of agent.run.requested. With an Idempotency-Key, a retry
 * of the same request returns the run created first; the same key with another body is refused.
 *
 * One statement (one commit) per created run, with or without a key: the key is not looked up first. A key
 * used before makes the insert meet the unique index on (tenant, creator, key); nothing of it is kept, and
 * the run created first is answered (or the request refused when its body differs).
 */
export function createRunHandler(deps: { pool: Pool; namespace: string; clock?: () => string; deadlineSeconds?: number }) {
  const clock = deps.clock ?? nowMicros;
  const deadlineSeconds = deps.deadlineSeconds ?? Limits.deadlineSeconds;
  const names = busNames(deps.namespace);

  async function replayed(cmd: CreateRunCommand, requestHash: string): Promise<RunSnapshot | null> {
    if (!cmd.idempotencyKey) return null;
    const found = await findByIdempotencyKey(deps.pool, { tenantId: cmd.principal.tenantId, userId: cmd.principal.userId }, cmd.idempotencyKey);
    if (!found) return null;
    if (found.requestHash !== requestHash) {
      throw new ValidationError("this Idempotency-Key was already used with a different request");
    }
    return found.snapshot;
  }

  return async function createRun(cmd: CreateRunCommand): Promise<RunSnapshot> {
    checkRunContent(cmd.body);
    const requestHash = createHash("sha256").update(canonicalJson(cmd.body)).digest("hex");
    const runId = randomUUID();
    const createdAt = clock();
    const command: RunRequested = { run_id: runId, tenant_id: cmd.principal.tenantId, created_by: cmd.principal.userId };
    if (cmd.elevationSessionId) command.elevation_session_id = cmd.elevationSessionId;
    // No roles are written here: the membership is the PDP's fact, seeded at the user's first decision and
    // changed only by administrators (a token re-sent with each run must not undo a revocation).
    try {
      const { state } = await appendRunEvents(deps.pool, {
        runId,
        tenantId: cmd.principal.tenantId,
        state: initialRunState,
        events: [
          {
            type: "run.queued",
            data: {
              input: cmd.body.input,
              mode: cmd.body.mode ?? "agent",
              response_language: cmd.body.response_language ?? null,
              created_by: cmd.principal.userId,
              created_at: createdAt,
              deadline_at: addSeconds(createdAt, deadlineSeconds),
              thread_id: null,
              elevation_session_id: cmd.elevationSessionId ?? null,
            },
          },
        ],
        commands: [
          {
            subject: names.runRequested,
            msgId: `run.requested.${runId}`,
            payload: command,
            headers: { "Steward-Run-Id": runId, traceparent: cmd.traceparent },
          },
        ],
        namespace: deps.namespace,
        traceparent: cmd.traceparent,
        idempotencyKey: cmd.idempotencyKey ?? null,
        requestHash,
      });
      return snapshotOf(runId, state);
    } catch (err) {
      // The key was used before (a retry, or two retries racing): answer with the run created first.
      if ((err as { code?: string }).code === UNIQUE_VIOLATION && cmd.idempotencyKey) {
        const winner = await replayed(cmd, requestHash);
        if (winner) return winner;
      }
      throw err;
    }
  };
}

export type CreateRun = ReturnType<typeof createRunHandler>;
