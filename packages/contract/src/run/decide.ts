import type { RunEvent } from "../events";
import type { RunCommand } from "./commands";
import { decideCompaction } from "./compact";
import { decideAnswer, decideCancel, decideConfirmation } from "./controls";
import type { LoopEffect, RunDecision } from "./decision";
import type { RunState } from "./fold";
import { decideQueue } from "./queue";
import { decideExpire, decideUnanswered, decideUnfoldable } from "./reaping";

/** The loop's decision on what it observed: the runner's own (it knows the model, the tools and the prompt). */
export type ObservationDecider<O> = (state: RunState, observation: O, now: bigint) => { readonly events: readonly RunEvent[]; readonly effect: LoopEffect };

/** What a decision may read besides the run: the clock (µs since the epoch) and, for the loop, its observation decider. */
export interface DecisionContext<O = never> {
  readonly now: bigint;
  readonly observe?: ObservationDecider<O>;
}

/**
 * The run's decider, the one place a run's events are decided, whoever writes them: the gateway (queue, answer,
 * confirm, cancel), the runner's loop (observe, compact), the reaper (expire, unanswered) and the runner through
 * the store (unfoldable). Replay checks every recorded event against it. Given the folded run and a command, it
 * returns the events to append, the runner requests to send, and what to do next. Pure: the clock comes in `ctx`.
 */
export function decide<O = never>(command: RunCommand<O>, state: RunState, ctx: DecisionContext<O>): RunDecision {
  switch (command.kind) {
    case "queue":
      return decideQueue(command, state, ctx.now);
    case "observe": {
      if (!ctx.observe) throw new TypeError("an observation is decided by the loop's decider, and none was given");
      const { events, effect } = ctx.observe(state, command.observation, ctx.now);
      return { events, commands: [], effect };
    }
    case "compact":
      return decideCompaction(command, state);
    case "cancel":
      return decideCancel(state, ctx.now);
    case "answer":
      return decideAnswer(command, state, ctx.now);
    case "confirm":
      return decideConfirmation(command, state, ctx.now);
    case "expire":
      return decideExpire(state, ctx.now);
    case "unanswered":
      return decideUnanswered(state, ctx.now, command.waitMicros);
    case "unfoldable":
      return decideUnfoldable(state, ctx.now);
    default: {
      const unreachable: never = command;
      throw new TypeError(`unknown command ${(unreachable as { kind: string }).kind}`);
    }
  }
}
