import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { TSchema } from "@sinclair/typebox";
import { RunErrorCode, ToolResultCode, toolFingerprint, type Evidence } from "@steward/contract";
import { isPostgresUnavailable, type Logger } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";
import type { ToolRegistry } from "../domain/registry";
import type { SqlSession } from "../domain/tool";
import type { IdempotencyStore } from "./idempotency-store";
import { fitToolResult } from "./fit-result";
import { HELD_RECORD_GRACE_MS, letGo, openedWhileHeld, type OpenedRecord } from "./held-record";
import { toolSignal } from "./tool-signal";

export interface InvokeCommand {
  readonly runId: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly stepNo: number;
  readonly callId: string;
  readonly toolName: string;
  readonly argumentsJson: string;
  readonly elevationSessionId: string;
  /** The MCP session the run was started from and its mode; empty or absent outside MCP. */
  readonly mcpSessionId?: string;
  readonly mcpMode?: string;
  readonly traceparent?: string;
  /** Milliseconds until the caller gives up (the gRPC deadline, set by the runner within the run's deadline). */
  readonly deadlineMs?: number;
  /** Aborts when the caller gives up on the call (a cancel, a lost connection): a running tool is stopped. */
  readonly signal?: AbortSignal;
  /**
   * Present when the call was sent before the caller's record of it was durable: resolves once the caller lets
   * it go on, rejects when it drops it. Until then the PDP may be asked, and nothing else is done.
   */
  readonly released?: Promise<void>;
}

export interface Verdict {
  readonly permit: boolean;
  readonly code: string;
  readonly reasons: string[];
  readonly policyIds: string[];
}

export interface InvokeOutcome {
  readonly fingerprint: string;
  readonly decision: Verdict;
  readonly resultCode: string;
  readonly result: { result: unknown; evidence: Evidence[]; next_state?: string };
  readonly replayed: boolean;
  readonly nextState?: string;
  /** Milliseconds spent getting the PDP's decision (its retries included). */
  readonly decisionMs: number;
  /** Milliseconds the tool itself ran: 0 when the result was replayed from its record or the call was denied. */
  readonly toolMs: number;
}

export class UnknownToolError extends Error {
  constructor(readonly toolName: string) {
    super(`tool ${toolName} is not registered`);
    this.name = "UnknownToolError";
  }
}

/**
 * The call could not be carried out for a reason outside the tool (PostgreSQL away) and may safely be made
 * again: nothing of it was kept. The caller retries; nothing is recorded as the tool's result.
 */
export class ToolUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the tool is unavailable for now", options);
    this.name = "ToolUnavailableError";
  }
}

/**
 * The caller gave up on the call (cancelled it, its deadline passed, its runner died) before the tool ran or
 * while it ran: nothing was kept, and nobody is listening. A call it left waiting for a record's lock goes
 * away at once instead of running for nobody and holding the lock from the runner that takes the run over.
 */
export class CallerGoneError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the caller gave up on the call", options);
    this.name = "CallerGoneError";
  }
}

export class InvalidArgumentsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidArgumentsError";
  }
}

const PDP_DEADLINE_MS = 2000;
/** The longest any tool may run, whatever time the caller has. */
const TOOL_TIMEOUT_MS = 30_000;
const PDP_ATTEMPTS = 2;
const PDP_RETRY_PAUSE_MS = 200;

const msSince = (start: number) => Math.round(performance.now() - start);

/**
 * Decides, then runs. The PDP is asked before anything runs; an unreachable PDP is a deny (60502). A tool's
 * own failure becomes a controlled result (60302, "tool failed") whose text never carries the raw error.
 */
export function createInvokeHandler(deps: {
  registry: ToolRegistry;
  pdp: PolicyDecisionApi;
  results: IdempotencyStore;
  logger: Logger;
  /** How long a held call keeps its record while its release has not come (HELD_RECORD_GRACE_MS by default). */
  heldGraceMs?: number;
}) {
  const checks = new Map<string, TypeCheck<TSchema>>();
  for (const tool of deps.registry.list()) if (!tool.validate) checks.set(tool.name, TypeCompiler.Compile(tool.input));

  async function ask(cmd: InvokeCommand, action: string, fingerprint: string, safety: string): Promise<Verdict> {
    const request = {
      principal: { tenantId: cmd.tenantId, userId: cmd.userId, roles: [], rolesFromToken: false },
      action,
      resource: { type: "tool", id: cmd.toolName },
      context: {
        run_id: cmd.runId,
        step_no: String(cmd.stepNo),
        fingerprint,
        tool_safety: safety,
        ...(cmd.elevationSessionId ? { elevation_session_id: cmd.elevationSessionId } : {}),
        // Named only when there is one: the decision log records them, and a policy may tell the modes apart.
        ...(cmd.mcpSessionId ? { mcp_session: cmd.mcpSessionId } : {}),
        ...(cmd.mcpMode ? { mcp_mode: cmd.mcpMode } : {}),
      },
    };
    // A short, bounded retry rides out a PDP replica restarting; then the answer is a deny (fail closed).
    for (let attempt = 1; ; attempt++) {
      try {
        const d = await deps.pdp.decide(request, { deadlineMs: PDP_DEADLINE_MS, traceparent: cmd.traceparent });
        return { permit: d.permit, code: d.code, reasons: d.reasons, policyIds: d.policyIds };
      } catch (err) {
        if (attempt < PDP_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, PDP_RETRY_PAUSE_MS));
          continue;
        }
        deps.logger.warn({ run_id: cmd.runId, tool: cmd.toolName, grpc_code: (err as { code?: number }).code }, "PDP unreachable; denying");
        return { permit: false, code: String(RunErrorCode.pdpUnavailable), reasons: ["policy decision point unavailable"], policyIds: [] };
      }
    }
  }

  /** Every result leaves within the event size limit (SPEC §10): the runner never sees an oversized one. */
  function fitted(cmd: InvokeCommand, toolName: string, result: InvokeOutcome["result"]): InvokeOutcome["result"] {
    const { body, cut } = fitToolResult(result);
    if (cut)
      deps.logger.info({ run_id: cmd.runId, step_no: cmd.stepNo, tool: toolName, original_bytes: cut.original_bytes }, "tool result cut to fit an event");
    return body;
  }

  return async function invoke(cmd: InvokeCommand): Promise<InvokeOutcome> {
    const tool = deps.registry.get(cmd.toolName);
    if (!tool) throw new UnknownToolError(cmd.toolName);
    let input: unknown;
    try {
      input = JSON.parse(cmd.argumentsJson || "{}");
    } catch {
      throw new InvalidArgumentsError("arguments are not JSON");
    }
    if (tool.validate) {
      const problem = tool.validate(input);
      if (problem) throw new InvalidArgumentsError(`arguments do not match the schema: ${problem}`);
    } else {
      const check = checks.get(tool.name)!;
      if (!check.Check(input)) {
        const first = check.Errors(input).First();
        throw new InvalidArgumentsError(`arguments do not match the schema${first ? ` at ${first.path || "/"}: ${first.message}` : ""}`);
      }
    }
    const fingerprint = toolFingerprint(tool.name, tool.normalise(input));
    const keepsRead = tool.safety === "read" && tool.idempotent && tool.reuseResult !== false;
    const holdsRecord = tool.idempotent && tool.reuseResult !== false && !keepsRead;
    /**
     * A read's record is looked up while the PDP decides: it serialises nothing (a read repeated at once changes
     * nothing), so it needs no lock and no transaction of its own. A write's record is held (locked and read)
     * while the PDP decides too: holding it runs nothing, and the tool itself still waits for the permit.
     */
    const openRecord = (): OpenedRecord => {
      const stored = keepsRead ? deps.results.find(cmd.runId, fingerprint) : null;
      const held = holdsRecord ? deps.results.hold(cmd.runId, fingerprint, tool.name) : null;
      // A denied call never looks at them.
      stored?.catch(() => undefined);
      held?.catch(() => undefined);
      return { stored, held };
    };
    // A held call opens its record at once too when a connection is free for it (else at its release).
    const records = cmd.released
      ? openedWhileHeld(openRecord, cmd.released, { early: deps.results.spare(), graceMs: deps.heldGraceMs ?? HELD_RECORD_GRACE_MS }).catch((err: unknown) => {
          throw new CallerGoneError({ cause: err });
        })
      : Promise.resolve(openRecord());
    const asked = performance.now();
    const deciding = ask(cmd, tool.policyPoint, fingerprint, tool.safety);
    const opened = await records;
    const { stored, held } = opened;
    const decision = await deciding;
    const decisionMs = msSince(asked);
    // Set by `execute` once the tool has run: a call answered from its record never runs it.
    let toolMs = 0;
    if (!decision.permit) {
      // Let go without waiting: a record still queued behind a repeat of this call must not delay the deny.
      letGo(opened);
      return {
        fingerprint,
        decision,
        resultCode: decision.code,
        result: { result: { error_code: decision.code, note: "denied by policy" }, evidence: [] },
        replayed: false,
        decisionMs,
        toolMs: 0,
      };
    }
    // Safe to try again: a read, or an idempotent tool (its effect commits with its record, or not at all).
    const retrySafe = tool.idempotent || tool.safety === "read";
    const execute = async (transaction?: SqlSession): Promise<{ resultCode: string; result: InvokeOutcome["result"] }> => {
      if (cmd.signal?.aborted) throw new CallerGoneError();
      const remainingMs = Math.max(1, Math.min(TOOL_TIMEOUT_MS, cmd.deadlineMs ?? TOOL_TIMEOUT_MS));
      // Stops at the tool's timeout, or when the caller cancels the call: a running query is cancelled with it.
      const stop = toolSignal(remainingMs, cmd.signal);
      const began = performance.now();
      try {
        const outcome = await tool.run(
          {
            tenantId: cmd.tenantId,
            userId: cmd.userId,
            runId: cmd.runId,
            stepNo: cmd.stepNo,
            signal: stop.signal,
            remainingMs,
            transaction,
          },
          input,
        );
        const produced: InvokeOutcome["result"] = { result: outcome.result, evidence: [...(outcome.evidence ?? [])] };
        if (outcome.nextState) produced.next_state = outcome.nextState;
        return { resultCode: outcome.resultCode ?? ToolResultCode.ok, result: fitted(cmd, tool.name, produced) };
      } catch (err) {
        // PostgreSQL going away is not the tool failing: the model must not see it as the tool's answer.
        if (retrySafe && isPostgresUnavailable(err)) throw new ToolUnavailableError({ cause: err });
        // Stopped because the caller went away: not the tool failing, and nothing for anyone to read.
        if (retrySafe && cmd.signal?.aborted) throw new CallerGoneError({ cause: err });
        deps.logger.warn({ run_id: cmd.runId, tool: tool.name, error_class: (err as Error)?.name }, "tool failed");
        deps.logger.debug({ err, run_id: cmd.runId, tool: tool.name }, "tool failure detail");
        return { resultCode: ToolResultCode.toolFailed, result: { result: { error_code: ToolResultCode.toolFailed, note: "tool failed" }, evidence: [] } };
      } finally {
        toolMs = msSince(began);
        stop.release();
      }
    };
    if (!tool.idempotent || tool.reuseResult === false) {
      const done = await execute();
      return { fingerprint, decision, ...done, replayed: false, nextState: done.result.next_state, decisionMs, toolMs };
    }
    if (stored) {
      const found = await stored;
      if (found) {
        const result = fitted(cmd, tool.name, found.result as InvokeOutcome["result"]);
        return { fingerprint, decision, resultCode: found.resultCode, result, replayed: true, nextState: result.next_state, decisionMs, toolMs: 0 };
      }
      const done = await execute();
      if (done.resultCode === ToolResultCode.ok) {
        // The record of a read only spares a repeat; losing it loses nothing, so the answer does not wait for it.
        void deps.results
          .keep(cmd.runId, fingerprint, tool.name, done)
          .catch((err) => deps.logger.debug({ run_id: cmd.runId, tool: tool.name, error_class: (err as Error)?.name }, "a read's result was not kept"));
      }
      return { fingerprint, decision, ...done, replayed: false, nextState: done.result.next_state, decisionMs, toolMs };
    }
    const record = await held!;
    const replayed = record.stored !== null;
    if (replayed) await record.release();
    const value = record.stored ?? (await record.complete(execute));
    // A result recorded before results were cut may be over the limit: it is cut on its way out too.
    const result = fitted(cmd, tool.name, value.result as InvokeOutcome["result"]);
    return { fingerprint, decision, resultCode: value.resultCode, result, replayed, nextState: result.next_state, decisionMs, toolMs };
  };
}

export type InvokeHandler = ReturnType<typeof createInvokeHandler>;
