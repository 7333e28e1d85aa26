import { nowMicros, parseMicros, type RunEvent, type RunState, type StoredRunEvent } from "@steward/contract";
import { ConcurrencyError, type Logger, type Pool } from "@steward/platform";
import { leaseHolder, listEndedThreadRuns, readStream } from "@steward/store";
import type { ToolSpec } from "@steward/proto";
import { conversationOf } from "../domain/conversation";
import { decideThrough, type Effect, type Observation } from "../domain/decider";
import { ModelCallAbortedError, ModelUnavailableError, type ModelProvider } from "../domain/model";
import { measureWindow } from "../domain/window";
import { outputCeiling } from "../domain/output-ceiling";
import { HISTORY_MAX_TURNS, buildHistory, historyBudget, type EarlierRun } from "../domain/thread-history";
import { askUserTool, schemasFor, type ToolCatalog, type ToolInfo } from "../domain/tool-catalog";
import { noCrashPoints, type CrashPoints } from "./crash-points";
import { stepClock, type DriveObserver } from "./drive-observer";
import type { DriveOutcome, RunContext } from "./run-context";
import type { RunStreams } from "./run-streams";
import { invokeTool } from "./invoke-tool";
import type { ToolExec } from "./tool-exec";
import { logDecision } from "./log-decision";
import { foldStored } from "./unfoldable-run";

export interface DriveDeps {
  readonly pool: Pool;
  readonly toolExec: ToolExec;
  readonly provider: ModelProvider;
  readonly tools: readonly ToolSpec[];
  readonly logger: Logger;
  readonly namespace: string;
  readonly runnerId: string;
  /** What the loop knows of the model: the profile's output setting, its name, its context window. */
  readonly model?: { readonly name?: string; readonly maxOutputTokens?: number; readonly contextTokens?: number };
  /** Forwards a token delta of the model's answer to live clients (not stored). */
  readonly publishDelta?: (runId: string, delta: { step_no: number; delta: string }) => void;
  /** The event store: the run's stream is opened, read and appended to; its appends reach the bus behind it. */
  readonly streams: RunStreams;
  /** Calls `onCancel` when the run's cancellation is requested while it is driven; returns the unsubscribe. */
  readonly watchCancel?: (runId: string, onCancel: () => void) => () => void;
  /** Test hooks; production uses none. */
  readonly crash?: CrashPoints;
  /** Hears committed events and step durations (the metrics); none by default. */
  readonly observer?: DriveObserver;
}

type InvokeEffect = Extract<Effect, { kind: "invoke_tool" }>;

/** A tool call sent held with the append that records it. */
interface HeldCall {
  readonly call: InvokeEffect["call"];
  readonly sent: Promise<{ observation: Observation; replayed: boolean }>;
  release(go: boolean): void;
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

/** An effect that asks the model, calls a tool or reads other runs: what a stopping runner no longer starts. */
function startsIo(effect: Effect): boolean {
  return effect.kind === "call_model" || effect.kind === "invoke_tool" || effect.kind === "load_history";
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
 * for another delivery. The decider (domain/decider.ts) says what to append and what to do; this loop only
 * appends, asks the model, calls tool-exec and feeds back what it learnt. Every decision's events are
 * appended, in one commit, before the I/O it names, so a crash at any point resumes here without asking the
 * model again or repeating a recorded tool call.
 */
export async function driveRun(deps: DriveDeps, delivered: RunContext): Promise<DriveOutcome> {
  const crash = deps.crash ?? noCrashPoints;
  const stream = deps.streams.open({
    runId: delivered.runId,
    tenantId: delivered.tenantId,
    traceparent: delivered.traceparent,
    events: delivered.events,
    firstDelivery: delivered.firstDelivery,
    publishedThrough: delivered.publishedThrough,
  });
  let events: StoredRunEvent[] = await stream.read();
  if (events.length === 0) {
    stream.close();
    return { kind: "missing" };
  }
  let state: RunState = foldStored(delivered.runId, events);
  // A re-driven command may lack the elevation reference; the run's first event has it.
  const ctx: RunContext = { ...delivered, elevationSessionId: delivered.elevationSessionId ?? state.elevation_session_id ?? undefined };
  const catalog = catalogOf(deps.tools);
  const log = deps.logger.child({ run_id: ctx.runId, tenant_id: ctx.tenantId, trace_id: traceIdOf(ctx.traceparent) });
  const decideAt = () => ({ now: parseMicros(nowMicros()), catalog, runnerId: deps.runnerId });

  // A cancellation aborts the model call in flight; the loop then reloads and finds the request.
  let cancelAbort = new AbortController();
  const unwatch = deps.watchCancel?.(ctx.runId, () => cancelAbort.abort()) ?? (() => undefined);

  /** Appends a decision's events (`folded`: the run through them, as the decider folded it) and goes on from there. */
  const append = async (more: readonly RunEvent[], folded: RunState): Promise<void> => {
    const appended = await stream.append(state, more, { folded });
    deps.observer?.committed(more);
    events.push(...appended.events);
    state = folded;
  };
  const reload = async (): Promise<void> => {
    events = await stream.read();
    state = foldStored(ctx.runId, events);
  };

  /** Older tool results to compact when the conversation would outgrow the model's window, or null. */
  const windowCompaction = (stepNo: number): Observation | null => measureWindow({ events, state, stepNo, model: deps.model });

  /**
   * The thread's earlier turns that ended before this run was created, built into the history to record and
   * truncated to the budget the model's window leaves (docs/threads.md). In a fork they are its inherited runs,
   * then its own (the query follows the fork). Read again if the runner dies before it is recorded: those runs
   * are over, so the same history comes out.
   */
  async function loadHistory(): Promise<Observation> {
    const threadId = state.thread_id!;
    const ids = await listEndedThreadRuns(deps.pool, {
      tenantId: ctx.tenantId,
      createdBy: state.created_by,
      threadId,
      runId: ctx.runId,
      endedBy: state.created_at!,
    });
    const read = ids.slice(-HISTORY_MAX_TURNS);
    const runs: EarlierRun[] = [];
    for (const runId of read) runs.push({ runId, events: await readStream(deps.pool, runId) });
    const maxOutput = outputCeiling({ profileMax: deps.model?.maxOutputTokens, model: deps.model?.name, agentState: state.agent_state });
    const budgetTokens = historyBudget(deps.model?.contextTokens, maxOutput);
    return { kind: "history_loaded", history: buildHistory({ threadId, runs, unread: ids.slice(0, ids.length - read.length), budgetTokens }) };
  }

  /** Asks the model, bounded by the run's deadline and by a cancellation. */
  async function askModel(stepNo: number): Promise<Observation | ModelCallAbortedError> {
    if (cancelAbort.signal.aborted) cancelAbort = new AbortController();
    // One plain controller per call, tied to the run's signals by listeners removed when the call ends. Not
    // AbortSignal.any or AbortSignal.timeout: Node 20 keeps such a signal in a process-wide set for as long as
    // an abort listener is on it, the SDK never removes the one it adds, and a finished call's signal never
    // aborts, so every model call stayed reachable for the life of the process (docs/performance.md, "Soak (memory)").
    const call = new AbortController();
    const abort = () => call.abort();
    const sources = [ctx.signal, cancelAbort.signal];
    for (const source of sources) source.addEventListener("abort", abort, { once: true });
    if (sources.some((source) => source.aborted)) abort();
    // Clamped: a delay past 2^31 - 1 ms (a run without a deadline) would make Node fire the timer at once.
    const timer = setTimeout(abort, Math.min(MAX_TIMER_MS, Math.max(1, msUntil(state.deadline_at))));
    try {
      const answer = await deps.provider.complete({
        messages: conversationOf(events, state),
        tools: schemasFor(catalog, state.agent_state, state.mode),
        maxOutputTokens: outputCeiling({ profileMax: deps.model?.maxOutputTokens, model: deps.model?.name, agentState: state.agent_state }),
        signal: call.signal,
        onDelta: deps.publishDelta ? (delta) => deps.publishDelta!(ctx.runId, { step_no: stepNo, delta }) : undefined,
      });
      return { kind: "model_answer", stepNo, answer, primary: deps.provider.primary };
    } catch (err) {
      if (err instanceof ModelCallAbortedError) return err;
      if (!(err instanceof ModelUnavailableError)) throw err;
      log.warn({ step_no: stepNo, provider: err.provider, last_delivery: ctx.lastDelivery }, "model unavailable");
      return { kind: "model_unavailable", stepNo, lastDelivery: ctx.lastDelivery, retryAfterMs: err.retryAfterMs };
    } finally {
      clearTimeout(timer);
      for (const source of sources) source.removeEventListener("abort", abort);
    }
  }

  /**
   * Sends a call to tool-exec within the run's remaining time (`at`: the run once the call is recorded); its
   * answer is the next observation. With `go`, the call is sent held until `go` settles.
   */
  async function callTool(effect: InvokeEffect, at: RunState, go?: Promise<boolean>): Promise<{ observation: Observation; replayed: boolean }> {
    const remaining = at.deadline_at ? msUntil(at.deadline_at) : 60_000;
    const outcome = await invokeTool(deps.toolExec, ctx, at.step_no, effect.call, effect.exploration, remaining, at, go);
    return { observation: { kind: "tool_outcome", result: outcome.event }, replayed: outcome.replayed };
  }

  /**
   * A call sent with the commit that records it (docs/architecture.md, "A tool call sent with its commit"):
   * tool-exec asks the PDP meanwhile and runs nothing until `release(true)`, sent once the commit held.
   * `release(false)` drops it; a second release changes nothing.
   */
  function sendHeld(effect: InvokeEffect, at: RunState): HeldCall {
    let release!: (go: boolean) => void;
    const go = new Promise<boolean>((resolve) => (release = resolve));
    const sent = callTool(effect, at, go);
    sent.catch(() => undefined); // dropped, or read once released
    return { call: effect.call, sent, release };
  }

  const steps = stepClock(deps.observer);
  /** The tool call sent with the append in hand, until it is released or dropped. */
  let held: HeldCall | null = null;
  let observation: Observation = { kind: "nothing" };
  let toolExecCall: { callId: string; replayed: boolean } | undefined;
  /** Another runner holds the run now (found when an append failed): nothing more is started here. */
  let takenOver = false;
  /** This loop starts no model or tool call any more: the delivery is over, the runner stops, or the run is another's. */
  const stopped = () => ctx.signal.aborted || ctx.stopping?.aborted || takenOver;
  try {
    for (;;) {
      // What was learnt is recorded before stopping: a tool's result is never left behind (the step in hand ends).
      if (observation.kind === "nothing" && (ctx.signal.aborted || ctx.stopping?.aborted)) return { kind: "lost" };
      const decision = decideThrough(state, observation, decideAt());
      if (decision.effect.kind === "invoke_tool" && decision.events.length > 0 && !stopped()) held = sendHeld(decision.effect, decision.state);
      try {
        if (decision.events.length > 0) await append(decision.events, decision.state);
      } catch (err) {
        held?.release(false);
        held = null;
        // We hold the lease, so another append can only be the creator's (a cancel, an answer) or the reaper's:
        // reload and decide on the same observation again, so a tool's result is never dropped.
        if (!(err instanceof ConcurrencyError) || ctx.signal.aborted) throw err;
        // Unless the lease ran out before the heartbeat could say so, and another runner drives the run now: the
        // run is the other's, and this loop starts nothing more (else both would ask the model for every step).
        // A tool's outcome in hand is still recorded first, if the run takes it.
        const holder = await leaseHolder(deps.pool, ctx.runId);
        if (holder !== null && holder !== deps.runnerId) {
          log.warn({ step_no: state.step_no, holder }, "another runner took the run over; handing it over");
          takenOver = true;
          if (observation.kind !== "tool_outcome") return { kind: "lost" };
        }
        log.info({ step_no: state.step_no }, "the run changed under us; reloading");
        await reload();
        continue;
      }
      logDecision(log, decision.events, toolExecCall);
      if (observation.kind === "model_answer") crash.reached("after_model");
      if (observation.kind === "tool_outcome") crash.reached("after_tool");
      observation = { kind: "nothing" };
      toolExecCall = undefined;
      const effect = decision.effect;
      // What was learnt is recorded: a stopping runner hands the run back before its next model or tool call.
      if (startsIo(effect) && stopped()) return { kind: "lost" };
      switch (effect.kind) {
        case "finished":
          steps.end();
          return { kind: "finished" };
        case "wait_for_user":
          steps.end();
          return { kind: "waiting" };
        case "retry_later":
          steps.end();
          return { kind: "retry", afterMs: effect.afterMs };
        case "decide_again":
          break;
        case "call_model": {
          crash.reached("before_model");
          steps.begin(effect.stepNo);
          const compaction = windowCompaction(effect.stepNo);
          if (compaction) {
            observation = compaction;
            break;
          }
          const answer = await askModel(effect.stepNo);
          if (answer instanceof ModelCallAbortedError) {
            if (ctx.signal.aborted) return { kind: "lost" };
            await reload(); // cancelled (the request is now in the events) or past the deadline
            break;
          }
          observation = answer;
          break;
        }
        case "load_history":
          observation = await loadHistory();
          break;
        case "invoke_tool": {
          const pending = held?.call === effect.call ? held.sent : callTool(effect, state);
          held?.release(true);
          held = null;
          crash.reached("during_tool");
          const sent = await pending;
          observation = sent.observation;
          toolExecCall = { callId: effect.call.call_id, replayed: sent.replayed };
          break;
        }
        default: {
          const unreachable: never = effect;
          throw new TypeError(`unknown effect ${JSON.stringify(unreachable)}`);
        }
      }
    }
  } catch (err) {
    if (err instanceof ConcurrencyError) return { kind: "lost" };
    throw err;
  } finally {
    held?.release(false); // the loop left before the call it sent could go on: nothing of it runs
    unwatch();
    stream.close();
  }
}
