import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root folder. */
export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Where local state lives: the development secret, logs, and any PostgreSQL/NATS started here. */
export const stewardHome = process.env.STEWARD_HOME || join(root, ".steward");
