// `steward prepare`: waits for PostgreSQL at DATABASE_URL (the owner), creates the database if missing, applies
// the migrations, gives each service's role LOGIN and its password (STEWARD_ROLE_PASSWORDS, JSON by service, as
// infra/containers/planes.cjs writes it) and, with STEWARD_SEED_DEMO=1, seeds the demo tenant. Run once before
// the services (the compose file's `prepare` service); safe to run again.
import { createRequire } from "node:module";
import { join } from "node:path";
import { root } from "../local/paths.mjs";
import { seedDemo } from "../local/seed.mjs";

const require = createRequire(import.meta.url);
const { createLogger, retryUntilUp } = require(join(root, "packages", "platform", "dist"));
const { ensureDatabase, migrate } = require(join(root, "packages", "store", "dist"));
const { enableServiceLogins } = require(join(root, "infra", "local", "service-roles.cjs"));

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write("prepare: DATABASE_URL is not set\n");
  process.exit(2);
}
const logger = createLogger("steward-prepare");
await retryUntilUp(() => ensureDatabase(databaseUrl), { what: "PostgreSQL", logger, maxDelayMs: 2000 });
const applied = await migrate(databaseUrl);
logger.info({ applied }, applied.length > 0 ? "migrated" : "schema is up to date");
if (process.env.STEWARD_ROLE_PASSWORDS) {
  const logins = await enableServiceLogins(databaseUrl, JSON.parse(process.env.STEWARD_ROLE_PASSWORDS));
  logger.info({ services: Object.keys(logins) }, "each service's PostgreSQL role may log in with its own password");
}
if (process.env.STEWARD_SEED_DEMO === "1") {
  const added = await seedDemo(databaseUrl);
  logger.info({ added }, "demo seeded");
}
logger.info("prepared");
