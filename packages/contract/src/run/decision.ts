import type { RequestedToolCall, RunEvent } from "../events";
import type { RunRequest } from "../run-requested";

/** The I/O the loop does after appending a decision's events. */
export type LoopEffect =
  /** Nothing to do outside: decide again with nothing observed. */
  | { readonly kind: "decide_again" }
  | { readonly kind: "call_model"; readonly stepNo: number }
  /** Read the thread's earlier runs; the history built from them is the next observation. */
  | { readonly kind: "load_history" }
  | { readonly kind: "invoke_tool"; readonly call: RequestedToolCall; readonly exploration: boolean }
  | { readonly kind: "wait_for_user" }
  | { readonly kind: "finished" }
  /** Hand the run back for a later delivery (the model is away and deliveries remain). */
  | { readonly kind: "retry_later"; readonly afterMs?: number };

/** What a writer other than the loop does after a decision. */
export type WriterEffect =
  /** Append the events (none: nothing to do) and send the commands. */
  | { readonly kind: "append" }
  /** The run is not in a state that takes the command: nothing is appended (the gateway answers 409). */
  | { readonly kind: "refused"; readonly reason: string };

export type RunEffect = LoopEffect | WriterEffect;

/** A decision: the events to append with the run's expected version, the runner requests to send, and what to do next. */
export interface RunDecision {
  readonly events: readonly RunEvent[];
  readonly commands: readonly RunRequest[];
  readonly effect: RunEffect;
}
