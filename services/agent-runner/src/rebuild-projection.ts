import { rebuildRunsProjection } from "@steward/store";
import { runCli, UsageError } from "./cli";

/** `npm run rebuild-projection`: rebuilds the runs read model from the event store of DATABASE_URL. */
runCli(
  "rebuild-projection",
  "usage: npm run rebuild-projection (reads DATABASE_URL)",
  (argv) => {
    if (argv.length > 0) throw new UsageError("no arguments are taken");
  },
  async (pool) => {
    const { runs, events } = await rebuildRunsProjection(pool);
    process.stdout.write(`rebuilt the runs projection: ${runs} runs from ${events} events\n`);
    return 0;
  },
);
