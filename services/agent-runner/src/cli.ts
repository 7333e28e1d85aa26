import { ConfigError, commonConfig, createPool, readConfig, type Pool } from "@steward/platform";

/** A command line the tool cannot take; the message (if any) is printed above the usage. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

function isUsageError(err: unknown): boolean {
  return err instanceof UsageError || err instanceof ConfigError || Boolean((err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS"));
}

function printUsage(err: unknown, usage: string): number {
  if ((err as Error).message) process.stderr.write(`${(err as Error).message}\n`);
  process.stderr.write(`${usage}\n`);
  return 2;
}

/**
 * The frame of the runner's command-line tools: parses the arguments, reads DATABASE_URL, opens a pool, runs
 * `work`, and sets the exit code — `work`'s, 2 for a usage or configuration error, 1 for a failure.
 */
export function runCli<A>(name: string, usage: string, parse: (argv: string[]) => A, work: (pool: Pool, args: A) => Promise<number>): void {
  const main = async (argv: string[]): Promise<number> => {
    let args: A;
    let databaseUrl: string;
    try {
      args = parse(argv);
      databaseUrl = readConfig({ DATABASE_URL: commonConfig.DATABASE_URL }).DATABASE_URL;
    } catch (err) {
      if (!isUsageError(err)) throw err;
      return printUsage(err, usage);
    }
    const pool = createPool(databaseUrl, { max: 2, applicationName: `steward-${name}` });
    try {
      return await work(pool, args);
    } finally {
      await pool.end();
    }
  };
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${name} failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
