import type { Logger } from "pino";

/** Runs the closers in order on SIGINT/SIGTERM, then exits. A second signal exits at once. */
export function onShutdown(logger: Logger, closers: Array<() => Promise<unknown>>): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, "shutting down");
    for (const close of closers) {
      try {
        await close();
      } catch (err) {
        logger.error({ err }, "error while shutting down");
      }
    }
    process.exit(0);
  };
  process.once("SIGINT", () => void stop("SIGINT"));
  process.once("SIGTERM", () => void stop("SIGTERM"));
}
