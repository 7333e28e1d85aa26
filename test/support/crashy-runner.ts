import type { RunningService, TestPlatform } from "./platform";

export interface CrashLoop {
  /** Processes started so far (the first one included). */
  readonly starts: number;
  /** Exits by SIGKILL, i.e. the crash hook fired (a process that died before it was ready counts too). */
  readonly crashes: number;
  /** Every exit, in order. */
  readonly exits: ReadonlyArray<{ runnerId: string; code: number | null; signal: string | null }>;
  /** Start failures that were not a crash. */
  readonly startErrors: readonly string[];
  /** The stdout lines of every process started, by runner id. */
  readonly lines: ReadonlyMap<string, string[]>;
  /** Stops restarting, waits for a start in progress, and stops the live process. */
  stop(): Promise<void>;
}

/**
 * Keeps one agent-runner with `STEWARD_TEST_CRASH_AT=<point>` alive: each time it dies, a new one is started
 * while `shouldRestart()` says so, fewer than `maxCrashes` crashes happened and fewer than `maxStarts`
 * processes were started. Resolves once the first process is ready.
 */
export async function startCrashLoop(
  platform: TestPlatform,
  point: string,
  options: { env?: Record<string, string>; maxStarts: number; maxCrashes: number; shouldRestart: () => boolean },
): Promise<CrashLoop> {
  let stopped = false;
  let starts = 0;
  let crashes = 0;
  let current: RunningService | null = null;
  let pending: Promise<void> = Promise.resolve();
  const exits: Array<{ runnerId: string; code: number | null; signal: string | null }> = [];
  const startErrors: string[] = [];
  const lines = new Map<string, string[]>();

  const maybeRestart = () => {
    if (!stopped && starts < options.maxStarts && crashes < options.maxCrashes && options.shouldRestart()) pending = launch();
  };

  const launch = async (): Promise<void> => {
    starts += 1;
    const runnerId = `crashy-${point}-${starts}`;
    let runner: RunningService;
    try {
      runner = await platform.startRunner({ ...options.env, STEWARD_TEST_CRASH_AT: point, RUNNER_ID: runnerId });
    } catch (err) {
      const message = (err as Error).message;
      if (/signal SIGKILL/.test(message)) {
        crashes += 1;
        exits.push({ runnerId, code: null, signal: "SIGKILL" });
      } else {
        startErrors.push(message);
      }
      maybeRestart();
      return;
    }
    lines.set(runnerId, runner.lines);
    current = runner;
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      exits.push({ runnerId, code, signal });
      if (signal === "SIGKILL") crashes += 1;
      if (current === runner) current = null;
      maybeRestart();
    };
    if (runner.child.exitCode !== null || runner.child.signalCode !== null) onExit(runner.child.exitCode, runner.child.signalCode);
    else runner.child.once("exit", onExit);
  };

  pending = launch();
  await pending;
  if (starts === 1 && current === null && startErrors.length > 0) throw new Error(`the crashy runner did not start: ${startErrors[0]}`);

  return {
    get starts() {
      return starts;
    },
    get crashes() {
      return crashes;
    },
    exits,
    startErrors,
    lines,
    async stop() {
      stopped = true;
      for (let seen: Promise<void> | null = null; seen !== pending;) {
        seen = pending;
        await seen;
      }
      const live = current as RunningService | null;
      current = null;
      await live?.stop();
    },
  };
}
