import type { Logger, Pool } from "@steward/platform";
import { extendLeases } from "@steward/store";

export interface HeldRun {
  /** Tells the bus the command is still being worked on (resets its ack wait). */
  readonly working: () => void;
  /** Called once when another runner has taken the run over. */
  readonly onLost: () => void;
}

export interface LeaseKeeper {
  /** Keeps the run's lease and its command alive until the returned release is called. */
  hold(runId: string, run: HeldRun): () => void;
  stop(): void;
}

/**
 * One heartbeat for every run this runner drives: every third of the lease it tells the bus each command
 * is in hand and extends all the leases in one statement. A lease is short (seconds) so that a dead
 * runner's runs are taken over quickly; a live runner keeps its claim however long a model call takes.
 * This is the only thing that keeps a command's ack wait from running out while its run is driven (the loop
 * sends nothing per step), so the bus hears it at every tick, even while the last extend is still waiting
 * for PostgreSQL. A heartbeat that cannot reach PostgreSQL changes nothing: nobody else can claim the run meanwhile.
 */
export function createLeaseKeeper(deps: { pool: Pool; runnerId: string; logger: Logger }, options: { leaseMs: number }): LeaseKeeper {
  const held = new Map<string, HeldRun>();
  let extending = false;

  async function beat(): Promise<void> {
    if (held.size === 0) return;
    for (const run of held.values()) run.working();
    if (extending) return;
    extending = true;
    try {
      const ids = [...held.keys()];
      const taken = await extendLeases(deps.pool, deps.runnerId, ids, options.leaseMs);
      for (const id of taken) {
        const run = held.get(id);
        if (run) {
          held.delete(id);
          deps.logger.warn({ run_id: id }, "lease lost: another runner has the run");
          run.onLost();
        }
      }
    } catch (err) {
      deps.logger.debug({ error_class: (err as Error)?.name }, "lease heartbeat failed; will try again");
    } finally {
      extending = false;
    }
  }

  const timer = setInterval(() => void beat(), Math.max(100, Math.floor(options.leaseMs / 3)));
  timer.unref();
  return {
    hold(runId, run) {
      held.set(runId, run);
      return () => {
        if (held.get(runId) === run) held.delete(runId);
      };
    },
    stop: () => clearInterval(timer),
  };
}
