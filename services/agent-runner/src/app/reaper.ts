import { RunErrorCode, foldRun, isTerminal, nowMicros, parseMicros } from "@steward/contract";
import { ConcurrencyError, type Logger, type Pool } from "@steward/platform";
import { appendRunEvents, findOverdueRuns, readStream, redriveQueuedRuns } from "@steward/store";

export interface ReaperOptions {
  /** How often the reaper looks, in ms. Default 60 000. */
  intervalMs?: number;
  /** A run queued this long since its last request is requested again, in ms. Default 30 000. */
  redriveAfterMs?: number;
}

export interface Reaper {
  /** One pass: fails overdue runs and re-drives stale queued ones; resolves with what it did. */
  sweep(): Promise<{ failed: string[]; redriven: string[] }>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Ends every run still queued or running past its deadline with `failed / 60402`, through the normal
 * append path, so the failure is an event like any other. It does not rely on the dead-letter path: a run
 * whose commands were all lost still ends. Several runners may sweep at once; optimistic concurrency lets
 * exactly one append win.
 */
export function createReaper(deps: { pool: Pool; namespace: string; logger: Logger }, options: ReaperOptions = {}): Reaper {
  const intervalMs = options.intervalMs ?? 60_000;
  const redriveAfterMs = options.redriveAfterMs ?? 30_000;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;

  async function failOverdue(runId: string, tenantId: string): Promise<boolean> {
    const state = foldRun(await readStream(deps.pool, runId));
    if (isTerminal(state) || !state.deadline_at || parseMicros(state.deadline_at) > parseMicros(nowMicros())) return false;
    try {
      await appendRunEvents(deps.pool, {
        runId,
        tenantId,
        state,
        events: [
          {
            type: "run.failed",
            data: { error: { code: RunErrorCode.deadlinePassed, message: "the run's deadline passed", step_no: state.step_no }, finished_at: nowMicros() },
          },
        ],
        namespace: deps.namespace,
      });
      return true;
    } catch (err) {
      if (err instanceof ConcurrencyError) return false;
      throw err;
    }
  }

  async function sweep() {
    const failed: string[] = [];
    for (const run of await findOverdueRuns(deps.pool)) {
      if (await failOverdue(run.id, run.tenant_id)) failed.push(run.id);
    }
    const redriven = await redriveQueuedRuns(deps.pool, deps.namespace, redriveAfterMs);
    if (failed.length || redriven.length) deps.logger.info({ failed: failed.length, redriven: redriven.length }, "reaper swept");
    return { failed, redriven };
  }

  return {
    sweep,
    start() {
      timer = setInterval(() => {
        if (running) return;
        running = sweep()
          .catch((err) => deps.logger.warn({ error_class: (err as Error)?.name }, "reaper sweep failed"))
          .finally(() => (running = null));
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
