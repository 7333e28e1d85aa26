import type { Logger } from "pino";

export interface ShutdownOptions {
  /** The process exits by then even if a closer hangs, in ms. Default 9000 (orchestrators wait 10 s). */
  deadlineMs?: number;
}

/**
 * Runs the closers in order on SIGINT/SIGTERM, then exits. A second signal, or a closer that takes the
 * process past the deadline, exits at once with status 1.
 */
export function onShutdown(logger: Logger, closers: Array<() => Promise<unknown>>, options: ShutdownOptions = {}): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, "shutting down");
    const deadline = setTimeout(() => {
      logger.warn("shutdown took too long; exiting");
      process.exit(1);
    }, options.deadlineMs ?? 9000);
    deadline.unref();
    for (const close of closers) {
      try {
        await close();
      } catch (err) {
        logger.error({ err }, "error while shutting down");
      }
    }
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
