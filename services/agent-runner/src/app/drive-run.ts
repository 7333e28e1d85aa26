import {
  RunErrorCode,
  foldRun,
  nowMicros,
  parseMicros,
  type RequestedToolCall,
  type RunEvent,
  type RunState,
  type StoredRunEvent,
} from "@steward/contract";
import { ConcurrencyError, type Logger, type Pool } from "@steward/platform";
import { appendRunEvents, readStream } from "@steward/store";
import type { ToolExecApi, ToolSpec } from "@steward/proto";
import { conversationOf } from "../domain/conversation";
import { eventsForAnswer } from "../domain/answer";
import { ModelUnavailableError, type ModelProvider, type ToolSchema } from "../domain/model";
import { nextStep } from "../domain/next-step";
import type { DriveOutcome, RunContext } from "./run-context";
import { invokeTool } from "./invoke-tool";

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
}

function traceIdOf(traceparent?: string): string | undefined {
  return traceparent?.split("-")[1];
}

/**
 * Drives one run from wherever its events say it stands until it ends, or until it must wait for another
 * delivery. Every model answer and tool result is appended before the next step, so a crash at any point
 * resumes here without asking the model again or repeating a recorded tool call.
 */
export async function driveRun(deps: DriveDeps, ctx: RunContext): Promise<DriveOutcome> {
  const events: StoredRunEvent[] = await readStream(deps.pool, ctx.runId);
  if (events.length === 0) return "missing";
  let state: RunState = foldRun(events);
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

  try {
    for (;;) {
      if (ctx.signal.aborted) return "lost";
      ctx.heartbeat();
      const step = nextStep(state, parseMicros(nowMicros()), registered);
      switch (step.kind) {
        case "done":
          return "finished";
        case "start":
          await append([{ type: "run.started", data: { runner_id: deps.runnerId, started_at: nowMicros() } }]);
          log.info({ step_no: 0 }, "run started");
          break;
        case "fail":
          await append([{ type: "run.failed", data: { error: step.error, finished_at: nowMicros() } }]);
          log.info({ step_no: state.step_no, code: step.error.code }, "run failed");
          break;
        case "run_tool":
          await runTool(step.call);
          break;
        case "call_model": {
          let answer;
          try {
            answer = await deps.provider.complete({
              messages: conversationOf(events),
              tools: schemas,
              maxOutputTokens: deps.maxOutputTokens,
              signal: ctx.signal,
            });
          } catch (err) {
            if (!(err instanceof ModelUnavailableError)) throw err;
            log.warn({ step_no: step.stepNo, provider: err.provider, last_delivery: ctx.lastDelivery }, "model unavailable");
            if (!ctx.lastDelivery) return "retry";
            await append([
              {
                type: "run.failed",
                data: { error: { code: RunErrorCode.modelUnavailable, message: "the model is unavailable", step_no: step.stepNo }, finished_at: nowMicros() },
              },
            ]);
            break;
          }
          await append(eventsForAnswer(state, step.stepNo, answer, nowMicros()));
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
      return "lost";
    }
    throw err;
  }

  async function runTool(call: RequestedToolCall): Promise<void> {
    const inFlight = events.some((e) => e.type === "tool_call" && e.data.call_id === call.call_id);
    if (!inFlight) {
      await append([
        { type: "tool_call", data: { step_no: state.step_no, call_id: call.call_id, tool_name: call.tool_name, arguments: call.arguments } },
      ]);
    }
    const outcome = await invokeTool(deps.toolExec, ctx, state.step_no, call);
    const more: RunEvent[] = [outcome.event];
    const spec = deps.tools.find((t) => t.name === call.tool_name);
    const { decision } = outcome.event.data;
    if (!decision.permit && spec?.abortOnDeny) {
      more.push({
        type: "run.failed",
        data: {
          error: { code: Number(decision.code) || RunErrorCode.policyDenied, message: "a tool the run depends on was denied", tool_name: call.tool_name, step_no: state.step_no },
          finished_at: nowMicros(),
        },
      });
    }
    await append(more);
    log.info(
      { step_no: state.step_no, tool: call.tool_name, result_code: outcome.event.data.result_code, permit: decision.permit, replayed: outcome.replayed },
      "tool step",
    );
  }
}


