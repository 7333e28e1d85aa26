/** Why a tool's signal aborted: its time ran out, or the caller gave up on the call (cancel, deadline, disconnect). */
export type ToolStopReason = "timeout" | "cancelled";

/**
 * The abort signal of one tool run: aborts after `timeoutMs`, or as soon as `caller` aborts. `release()` (call it
 * when the run ends) clears the timer and removes the listener from `caller`. Not AbortSignal.any or
 * AbortSignal.timeout: Node 20 keeps a signal reachable in a process-wide set while it has an abort listener,
 * so a signal that never fires would outlive its call (see agent-runner's askModel).
 */
export function toolSignal(timeoutMs: number, caller?: AbortSignal): { signal: AbortSignal; release(): void } {
  const run = new AbortController();
  const cancelled = () => run.abort("cancelled" satisfies ToolStopReason);
  const timer = setTimeout(() => run.abort("timeout" satisfies ToolStopReason), Math.max(1, timeoutMs));
  if (caller?.aborted) cancelled();
  else caller?.addEventListener("abort", cancelled, { once: true });
  return {
    signal: run.signal,
    release() {
      clearTimeout(timer);
      caller?.removeEventListener("abort", cancelled);
    },
  };
}
