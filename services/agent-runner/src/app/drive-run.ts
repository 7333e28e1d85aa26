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
import { ModelCallAbortedError, ModelUnavailableError, type ModelAnswer, type ModelProvider, type ToolSchema } from "../domain/model";
import { nextStep } from "../domain/next-step";
import { noCrashPoints, type CrashPoints } from "./crash-points";
import type { DriveOutcome, RunContext } from "./run-context";
import { runToolStep, shortCircuitResult } from "./tool-step";

export interface DriveDeps {
  readonly pool: Pool;
  readonly toolExec: ToolExecApi;
  readonly provider: ModelProvider;
  readonly tools: readonly ToolSpec[];
  readonly logger: Logger;
  readonly namespace: string;
  readonly runnerId: string;
  /** Per-call output ceiling in tokens. */
  readonly maxOutputTokens: number;
  /** Test hooks; production uses none. */
  readonly crash?: CrashPoints;
}

function traceIdOf(traceparent?: string): string | undefined {
  return traceparent?.split("-")[1];
}

function msUntil(deadlineAt: string | null): number {
  if (!deadlineAt) return Number.MAX_SAFE_INTEGER;
  return Number((parseMicros(deadlineAt) - parseMicros(nowMicros())) / 1000n);
}

/**
 * Drives one run from wherever its events say it stands until it ends, or until it must wait for another
 * delivery. Every model answer and tool result is appended before the next step, so a crash at any point
 * resumes here without asking the model again or repeating a recorded tool call.
 */
export async function driveRun(deps: DriveDeps, delivered: RunContext): Promise<DriveOutcome> {
  const crash = deps.crash ?? noCrashPoints;
  const events: StoredRunEvent[] = await readStream(deps.pool, delivered.runId);
  if (events.length === 0) return { kind: "missing" };
  let state: RunState = foldRun(events);
  // A re-driven command may lack the elevation reference; the run's first event has it.
  const ctx: RunContext = { ...delivered, elevationSessionId: delivered.elevationSessionId ?? state.elevation_session_id ?? undefined };
  const registered = new Set(deps.tools.map((t) => t.name));
  const schemas: ToolSchema[] = deps.tools.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: JSON.parse(t.inputSchemaJson) as Record<string, unknown>,
  }));
  const log = deps.logger.child({ run_id: ctx.runId, trace_id: traceIdOf(ctx.traceparent) });

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

  /** Asks the model, bounded by the run's deadline; the error when it could not answer. */
  async function askModel(): Promise<ModelAnswer | ModelUnavailableError | ModelCallAbortedError> {
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(Math.max(1, msUntil(state.deadline_at)))]);
    try {
      return await deps.provider.complete({ messages: conversationOf(events), tools: schemas, maxOutputTokens: deps.maxOutputTokens, signal });
    } catch (err) {
      if (err instanceof ModelCallAbortedError) return err;
      if (!(err instanceof ModelUnavailableError)) throw err;
      log.warn({ step_no: state.step_no + 1, provider: err.provider, last_delivery: ctx.lastDelivery }, "model unavailable");
      return err;
    }
  }

  try {
    for (;;) {
      if (ctx.signal.aborted) return { kind: "lost" };
      ctx.heartbeat();
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
        case "open_circuit":
          await append([{ type: "circuit.opened", data: { step_no: state.step_no, tool_name: step.toolName, failures: step.failures } }]);
          log.info({ step_no: state.step_no, tool: step.toolName }, "tool circuit opened");
          break;
        case "short_circuit":
          await append([shortCircuitResult(state, step.call)]);
          break;
        case "run_tool":
          await runToolStep({ toolExec: deps.toolExec, tools: deps.tools, crash }, ctx, state, events, step.call, append, log);
          break;
        case "call_model": {
          crash.reached("before_model");
          const answer = await askModel();
          if (answer instanceof ModelCallAbortedError) {
            if (ctx.signal.aborted) return { kind: "lost" };
            break; // the deadline passed: the next step fails the run with 60402
          }
          if (answer instanceof ModelUnavailableError) {
            if (msUntil(state.deadline_at) <= 0) break; // the next step fails the run with 60402
            if (!ctx.lastDelivery) return { kind: "retry", afterMs: answer.retryAfterMs };
            const error = { code: RunErrorCode.modelUnavailable, message: "the model is unavailable", step_no: step.stepNo };
            await append([{ type: "run.failed", data: { error, finished_at: nowMicros() } }]);
            break;
          }
          await append(eventsForAnswer(state, step.stepNo, answer, nowMicros()));
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
    }
  } catch (err) {
    if (err instanceof ConcurrencyError) {
      log.info({ step_no: state.step_no }, "another runner advanced the run; letting go");
      return { kind: "lost" };
    }
    throw err;
  }
}
