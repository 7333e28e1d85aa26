import { Limits, decide, foldRun, nowMicros, parseMicros, type RunCommand } from "@steward/contract";
import { ConcurrencyError, type Logger, type Pool } from "@steward/platform";
import { admitDeferred, findOverdueRuns, findUnansweredRuns, redriveStrandedRuns, tenantsWithDeferredRuns } from "@steward/store";
import type { DriveObserver } from "./drive-observer";
import type { RunStreams } from "./run-streams";

export interface ReaperOptions {
  /** How often the reaper looks, in ms. Default 60 000. */
  intervalMs?: number;
  /** A run queued (or running with a lapsed lease) this long since its last request is requested again, in ms. Default 30 000. */
  redriveAfterMs?: number;
  /** How often stranded runs are looked for, in ms. Default 5000. */
  redriveIntervalMs?: number;
  /** How long a question or a confirmation waits for the user, in seconds. Default: the limit (300). */
  askWaitSeconds?: number;
  /** Fair share (admission.ts): with a limit, deferred runs are admitted on each re-drive pass where places are free. */
  tenantMaxRunning?: number;
}

export interface Reaper {
  /** One pass: fails overdue runs and re-drives stale queued ones; resolves with what it did. */
  sweep(): Promise<{ failed: string[]; redriven: string[] }>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Ends every run still queued or running past its deadline with `failed / 60402`, and every run that waited
 * for the user past the wait with `failed / 60406`, as the run's decider decides them, through the normal
 * append path, so the failure is an event like any other. It does not rely on the dead-letter path: a run
 * whose commands were all lost still ends. Several runners may sweep at once; optimistic concurrency lets
 * exactly one append win.
 */
export function createReaper(
  deps: { pool: Pool; namespace: string; logger: Logger; streams: RunStreams; observer?: Pick<DriveObserver, "committed"> },
  options: ReaperOptions = {},
): Reaper {
  const intervalMs = options.intervalMs ?? 60_000;
  const redriveAfterMs = options.redriveAfterMs ?? 30_000;
  const redriveIntervalMs = options.redriveIntervalMs ?? 5000;
  const timers: NodeJS.Timeout[] = [];
  let running: Promise<unknown> | null = null;

  const askWaitMicros = BigInt(options.askWaitSeconds ?? Limits.askUserWaitSeconds) * 1_000_000n;

  /** The reaper's commands: the deadline, and the wait for the user (the decider applies only the one that fits). */
  const commands: readonly RunCommand[] = [{ kind: "expire" }, { kind: "unanswered", waitMicros: askWaitMicros }];

  async function failOverdue(runId: string, tenantId: string): Promise<boolean> {
    const stream = deps.streams.open({ runId, tenantId });
    const state = foldRun(await stream.read());
    // Judged again from the run's events (the projection only nominated it), by the run's decider.
    const now = parseMicros(nowMicros());
    const events = commands.map((command) => decide(command, state, { now }).events).find((decided) => decided.length > 0);
    if (!events) return false;
    try {
      await stream.append(state, events);
      deps.observer?.committed(events);
      return true;
    } catch (err) {
      if (err instanceof ConcurrencyError) return false;
      throw err;
    } finally {
      stream.close();
    }
  }

  async function failDue(): Promise<string[]> {
    const failed: string[] = [];
    const askWaitSeconds = Number(askWaitMicros / 1_000_000n);
    for (const run of [...(await findOverdueRuns(deps.pool)), ...(await findUnansweredRuns(deps.pool, askWaitSeconds))]) {
      try {
        if (await failOverdue(run.id, run.tenant_id)) failed.push(run.id);
      } catch (err) {
        // One run the reaper cannot end (a stream that does not fold) never keeps it from the others.
        deps.logger.warn({ run_id: run.id, error_class: (err as Error)?.name }, "reaper could not end an overdue run");
      }
    }
    return failed;
  }

  /**
   * Stranded runs requested again, and deferred runs admitted where their tenant has room: a run's end
   * admits the next one at once; this pass catches what a runner that died meanwhile left undone.
   */
  async function redrive(): Promise<string[]> {
    const redriven = await redriveStrandedRuns(deps.pool, deps.namespace, redriveAfterMs);
    const limit = options.tenantMaxRunning;
    if (!limit) return redriven;
    for (const tenant of await tenantsWithDeferredRuns(deps.pool)) redriven.push(...(await admitDeferred(deps.pool, deps.namespace, tenant, limit)));
    return redriven;
  }

  async function sweep() {
    const failed = await failDue();
    const redriven = await redrive();
    if (failed.length || redriven.length) deps.logger.info({ failed: failed.length, redriven: redriven.length }, "reaper swept");
    return { failed, redriven };
  }

  /** One pass of `work` at a time across both timers; a failed pass (PostgreSQL away) waits for the next tick. */
  function every(ms: number, work: () => Promise<unknown>): void {
    const timer = setInterval(() => {
      if (running) return;
      running = work()
        .catch((err) => deps.logger.warn({ error_class: (err as Error)?.name }, "reaper pass failed"))
        .finally(() => (running = null));
    }, ms);
    timer.unref();
    timers.push(timer);
  }

  return {
    sweep,
    start() {
      every(intervalMs, async () => {
        const failed = await failDue();
        if (failed.length) deps.logger.info({ failed: failed.length }, "reaper failed overdue runs");
      });
      every(redriveIntervalMs, async () => {
        const redriven = await redrive();
        if (redriven.length) deps.logger.info({ redriven: redriven.length }, "re-drove stranded runs");
      });
    },
    async stop() {
      for (const t of timers) clearInterval(t);
      await running;
    },
  };
}
