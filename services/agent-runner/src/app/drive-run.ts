import {
  RunErrorCode,
  foldRun,
  nowMicros,
  parseMicros,
  type RunEvent,
  type RunState,
  type StoredRunEvent,
} from "@steward/contract";
import { ConcurrencyError, type Logger, type Pool } from "@steward/platform";
import { appendRunEvents, readStream } from "@steward/store";
import type { ToolExecApi, ToolSpec } from "@steward/proto";
import { conversationOf } from "../domain/conversation";
import { eventsForAnswer } from "../domain/answer";
import { ModelCallAbortedError, ModelUnavailableError, type ModelAnswer, type ModelProvider } from "../domain/model";
import { nextStep } from "../domain/next-step";
import { callsToCompact, estimateTokens } from "../domain/compaction";
import { outputCeiling } from "../domain/output-ceiling";
import { askUserTool, schemasFor, type ToolCatalog, type ToolInfo } from "../domain/tool-catalog";
import { noCrashPoints, type CrashPoints } from "./crash-points";
import type { DriveOutcome, RunContext } from "./run-context";
import { runGatedCall } from "./gated-call";

export interface DriveDeps {
  readonly pool: Pool;
  readonly toolExec: ToolExecApi;
  readonly provider: ModelProvider;
  readonly tools: readonly ToolSpec[];
  readonly logger: Logger;
  readonly namespace: string;
  readonly runnerId: string;
  /** What the loop knows of the model: the profile's output setting, its name, its context window. */
  readonly model?: { readonly name?: string; readonly maxOutputTokens?: number; readonly contextTokens?: number };
  /** Forwards a token delta of the model's answer to live clients (not stored). */
  readonly publishDelta?: (runId: string, delta: { step_no: number; delta: string }) => void;
  /** Calls `onCancel` when the run's cancellation is requested while it is driven; returns the unsubscribe. */
  readonly watchCancel?: (runId: string, onCancel: () => void) => () => void;
  /** Test hooks; production uses none. */
  readonly crash?: CrashPoints;
}

/** The longest delay setTimeout honours, ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function traceIdOf(traceparent?: string): string | undefined {
  return traceparent?.split("-")[1];
}

function msUntil(deadlineAt: string | null): number {
  if (!deadlineAt) return Number.MAX_SAFE_INTEGER;
  return Number((parseMicros(deadlineAt) - parseMicros(nowMicros())) / 1000n);
}

/** The catalog the loop offers: tool-exec's tools plus the runner's own ask_user. */
export function catalogOf(tools: readonly ToolSpec[]): ToolCatalog {
  const entries: ToolInfo[] = tools.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: JSON.parse(t.inputSchemaJson) as Record<string, unknown>,
    safety: t.safety === "write" ? "write" : "read",
    exploration: t.exploration,
    requireConfirmation: t.requireConfirmation,
    abortOnDeny: t.abortOnDeny,
    idempotent: t.idempotent,
    policyPoint: t.policyPoint,
    states: t.states,
    builtIn: false,
  }));
  return new Map([...entries, askUserTool].map((t) => [t.name, t]));
}

/**
 * Drives one run from wherever its events say it stands until it ends, waits for the user, or must wait
 * for another delivery. Every model answer and tool result is appended before the next step, so a crash at
 * any point resumes here without asking the model again or repeating a recorded tool call.
 */
export async function driveRun(deps: DriveDeps, delivered: RunContext): Promise<DriveOutcome> {
  const crash = deps.crash ?? noCrashPoints;
  let events: StoredRunEvent[] = await readStream(deps.pool, delivered.runId);
  if (events.length === 0) return { kind: "missing" };
  let state: RunState = foldRun(events);
  // A re-driven command may lack the elevation reference; the run's first event has it.
  const ctx: RunContext = { ...delivered, elevationSessionId: delivered.elevationSessionId ?? state.elevation_session_id ?? undefined };
  const catalog = catalogOf(deps.tools);
  const registered = new Set(catalog.keys());
  const log = deps.logger.child({ run_id: ctx.runId, trace_id: traceIdOf(ctx.traceparent) });

  // A cancellation aborts the model call in flight; the loop then reloads and finds the request.
  let cancelAbort = new AbortController();
  const unwatch = deps.watchCancel?.(ctx.runId, () => cancelAbort.abort()) ?? (() => undefined);

  const append = async (more: RunEvent[]): Promise<void> => {
    const result = await appendRunEvents(deps.pool, {
      runId: ctx.runId,
      tenantId: ctx.tenantId,
      state,
      events: more,
      namespace: deps.namespace,
      traceparent: ctx.traceparent,
    });
    events.push(...result.events);
    state = result.state;
  };
  const reload = async (): Promise<void> => {
    events = await readStream(deps.pool, ctx.runId);
    state = foldRun(events);
  };

  /** Compacts older tool results (an event) when the conversation would outgrow the model's window. */
  async function fitWindow(stepNo: number): Promise<void> {
    const window = deps.model?.contextTokens;
    if (!window) return;
    const maxOutput = outputCeiling({ profileMax: deps.model?.maxOutputTokens, model: deps.model?.name, agentState: state.agent_state });
    const budget = Math.max(256, Math.floor(window * 0.9) - maxOutput);
    const messages = conversationOf(events, state);
    const callIds = callsToCompact(messages, budget).filter((id) => !state.compacted_calls.includes(id));
    if (callIds.length === 0) return;
    const before = estimateTokens(messages);
    const after = estimateTokens(conversationOf(events, { ...state, compacted_calls: [...state.compacted_calls, ...callIds] }));
    await append([{ type: "context.compacted", data: { step_no: stepNo, call_ids: callIds, tokens_before: before, tokens_after: after } }]);
    log.info({ step_no: stepNo, compacted: callIds.length, tokens_before: before, tokens_after: after }, "context compacted");
  }

  /** Asks the model, bounded by the run's deadline and by a cancellation. */
  async function askModel(stepNo: number): Promise<ModelAnswer | ModelUnavailableError | ModelCallAbortedError> {
    if (cancelAbort.signal.aborted) cancelAbort = new AbortController();
    // One plain controller per call, tied to the run's signals by listeners removed when the call ends. Not
    // AbortSignal.any or AbortSignal.timeout: Node 20 keeps such a signal in a process-wide set for as long as
    // an abort listener is on it, the SDK never removes the one it adds, and a finished call's signal never
    // aborts, so every model call stayed reachable for the life of the process (docs/performance.md, soak).
    const call = new AbortController();
    const abort = () => call.abort();
    const sources = [ctx.signal, cancelAbort.signal];
    for (const source of sources) source.addEventListener("abort", abort, { once: true });
    if (sources.some((source) => source.aborted)) abort();
    // Clamped: a delay past 2^31 - 1 ms (a run without a deadline) would make Node fire the timer at once.
    const timer = setTimeout(abort, Math.min(MAX_TIMER_MS, Math.max(1, msUntil(state.deadline_at))));
    const signal = call.signal;
    try {
      return await deps.provider.complete({
        messages: conversationOf(events, state),
        tools: schemasFor(catalog, state.agent_state, state.mode),
        maxOutputTokens: outputCeiling({ profileMax: deps.model?.maxOutputTokens, model: deps.model?.name, agentState: state.agent_state }),
        signal,
        onDelta: deps.publishDelta ? (delta) => deps.publishDelta!(ctx.runId, { step_no: stepNo, delta }) : undefined,
      });
    } catch (err) {
      if (err instanceof ModelCallAbortedError) return err;
      if (!(err instanceof ModelUnavailableError)) throw err;
      log.warn({ step_no: state.step_no + 1, provider: err.provider, last_delivery: ctx.lastDelivery }, "model unavailable");
      return err;
    } finally {
      clearTimeout(timer);
      for (const source of sources) source.removeEventListener("abort", abort);
    }
  }

  try {
    for (;;) {
      if (ctx.signal.aborted || ctx.stopping?.aborted) return { kind: "lost" };
      ctx.heartbeat();
      try {
        const step = nextStep(state, parseMicros(nowMicros()), registered);
        switch (step.kind) {
          case "done":
            return { kind: "finished" };
          case "start":
            await append([{ type: "run.started", data: { runner_id: deps.runnerId, started_at: nowMicros() } }]);
            log.info({ step_no: 0 }, "run started");
            break;
          case "fail":
            await append([{ type: "run.failed", data: { error: step.error, finished_at: nowMicros() } }]);
            log.info({ step_no: state.step_no, code: step.error.code }, "run failed");
            break;
          case "cancel":
            await append([
              { type: "run.cancelled", data: { error: { code: RunErrorCode.cancelled, message: "the run was cancelled" }, finished_at: nowMicros() } },
            ]);
            log.info({ step_no: state.step_no }, "run cancelled");
            break;
          case "open_circuit":
            await append([{ type: "circuit.opened", data: { step_no: state.step_no, tool_name: step.toolName, failures: step.failures } }]);
            log.info({ step_no: state.step_no, tool: step.toolName }, "tool circuit opened");
            break;
          case "short_circuit":
          case "run_tool": {
            const waiting = await runGatedCall(
              { toolExec: deps.toolExec, catalog, crash },
              { ctx, state, events, call: step.call, shortCircuit: step.kind === "short_circuit", append, log },
            );
            if (waiting) return { kind: "waiting" };
            break;
          }
          case "call_model": {
            crash.reached("before_model");
            await fitWindow(step.stepNo);
            const answer = await askModel(step.stepNo);
            if (answer instanceof ModelCallAbortedError) {
              if (ctx.signal.aborted) return { kind: "lost" };
              await reload(); // cancelled (the request is now in the events) or past the deadline
              break;
            }
            if (answer instanceof ModelUnavailableError) {
              if (msUntil(state.deadline_at) <= 0) break; // the next step fails the run with 60402
              if (!ctx.lastDelivery) return { kind: "retry", afterMs: answer.retryAfterMs };
              const error = { code: RunErrorCode.modelUnavailable, message: "the model is unavailable", step_no: step.stepNo };
              await append([{ type: "run.failed", data: { error, finished_at: nowMicros() } }]);
              break;
            }
            const fellBack: RunEvent[] =
              deps.provider.primary && answer.provider !== deps.provider.primary
                ? [{ type: "provider.fallback", data: { step_no: step.stepNo, from: deps.provider.primary, to: answer.provider } }]
                : [];
            await append([...fellBack, ...eventsForAnswer(state, step.stepNo, answer, nowMicros())]);
            crash.reached("after_model");
            log.info(
              { step_no: step.stepNo, provider: answer.provider, tool_calls: answer.toolCalls.length, finish: answer.finishReason },
              "model step",
            );
            break;
          }
          default: {
            const unreachable: never = step;
            throw new TypeError(`unknown step ${JSON.stringify(unreachable)}`);
          }
        }
      } catch (err) {
        // We hold the lease, so another append can only be the creator's (a cancel): reload and go on.
        if (!(err instanceof ConcurrencyError) || ctx.signal.aborted) throw err;
        log.info({ step_no: state.step_no }, "the run changed under us; reloading");
        await reload();
      }
    }
  } catch (err) {
    if (err instanceof ConcurrencyError) return { kind: "lost" };
    throw err;
  } finally {
    unwatch();
  }
}
