import { ConfigError, commonConfig, createPool, readConfig } from "@steward/platform";
import { rebuildRunsProjection } from "@steward/store";

/** `npm run rebuild-projection`: rebuilds the runs read model from the event store of DATABASE_URL. */
async function main(argv: string[]): Promise<number> {
  let databaseUrl: string;
  try {
    if (argv.length > 0) throw new ConfigError("arguments", "none are taken");
    databaseUrl = readConfig({ DATABASE_URL: commonConfig.DATABASE_URL }).DATABASE_URL;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\nusage: npm run rebuild-projection (reads DATABASE_URL)\n`);
    return 2;
  }
  const pool = createPool(databaseUrl, { max: 1, applicationName: "steward-rebuild-projection" });
  try {
    const { runs, events } = await rebuildRunsProjection(pool);
    process.stdout.write(`rebuilt the runs projection: ${runs} runs from ${events} events\n`);
    return 0;
  } finally {
    await pool.end();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`rebuild failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
