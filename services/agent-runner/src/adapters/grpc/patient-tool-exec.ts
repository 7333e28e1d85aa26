import { status } from "@grpc/grpc-js";
import { RunErrorCode } from "@steward/contract";
import type { CallOptions, InvokeRequest, InvokeResponse, ToolExecApi } from "@steward/proto";

export interface PatienceOptions {
  /** How long one call keeps trying while nothing could run, in ms. Default 60 000 (SPEC §10's outage). */
  waitMs?: number;
  /** First pause between tries, in ms; doubles up to 2 s. Default 250. */
  initialDelayMs?: number;
}

/**
 * True when the answer or the error proves that nothing ran and nothing was kept, so the same call may be
 * made again: the PDP could not be asked (a fail-closed deny, 60502), tool-exec said it is starting or cannot
 * reach its database, there was no connection to send the call on, or the breaker refused to send it at all. A dropped connection proves nothing
 * (the tool may have run) and is not retried here.
 */
function nothingRan(outcome: { res?: InvokeResponse; err?: unknown }): boolean {
  if (outcome.res) return outcome.res.decision?.permit === false && outcome.res.decision.code === String(RunErrorCode.pdpUnavailable);
  const err = outcome.err as { code?: unknown; details?: unknown };
  if (err?.code === "EOPENBREAKER") return true;
  return err?.code === status.UNAVAILABLE && typeof err.details === "string" && NOTHING_SENT.test(err.details);
}

/**
 * UNAVAILABLE answers that prove the call was not sent or not kept: tool-exec's own (starting, no database),
 * and the channel's when it has no connection to send on (refused, or the name does not resolve while a
 * container is away) or was replaced while the call waited for one (stuck connecting to a dead address).
 * Anything else, such as a connection dropped mid-call, may follow a tool that ran.
 */
const NOTHING_SENT = /^(tool-exec (is starting|cannot reach its database)|No connection established|Name resolution failed|Channel closed before call started)/;

/**
 * Rides out a PDP, a database or a tool-exec that is away for a while (a restart, an outage of up to a
 * minute): a call that provably did nothing is made again with a capped backoff, within the call's own
 * deadline and `waitMs`. Only then does the fail-closed deny reach the run as the tool's result, so a short
 * outage neither changes what the model sees nor loses a tool's effect.
 */
export function withPatience(api: ToolExecApi, options: PatienceOptions = {}): ToolExecApi {
  const waitMs = options.waitMs ?? 60_000;
  const initial = options.initialDelayMs ?? 250;
  async function invoke(req: InvokeRequest, opts: CallOptions = {}): Promise<InvokeResponse> {
    const started = Date.now();
    const deadlineAt = started + (opts.deadlineMs ?? 5000);
    for (let attempt = 0; ; attempt++) {
      const left = deadlineAt - Date.now();
      let outcome: { res?: InvokeResponse; err?: unknown };
      try {
        outcome = { res: await api.invoke(req, { ...opts, deadlineMs: Math.max(1, left) }) };
      } catch (err) {
        outcome = { err };
      }
      const pause = Math.min(2000, initial * 2 ** Math.min(attempt, 4));
      const stillWorthIt = Date.now() - started + pause < waitMs && deadlineAt - Date.now() - pause > 1000;
      if (!nothingRan(outcome) || !stillWorthIt) {
        if (outcome.res) return outcome.res;
        throw outcome.err;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
  return { listTools: (o) => api.listTools(o), invoke, state: () => api.state(), close: () => api.close() };
}
