import { Type, type Static } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { ConfigError } from "@steward/platform";
import { DATASET_NAME, type DatasetTenants } from "@steward/store";
import { defaultDatasetUrl } from "./default-url";

/**
 * One dataset tool-exec can read: where it lives. Which tenants may have it is the operator's list
 * (DATASET_TENANTS); which of their members may use it, each tenant's grant (tenant_datasets).
 */
export interface DatasetConfig {
  readonly name: string;
  /** A login role that may read only this dataset, on a database that holds no application table. */
  readonly url: string;
  /** The schema the dataset's tables are in (the reader's search_path). */
  readonly schema: string;
  /** Shown to the model beside the name when it lists what it may focus. */
  readonly description?: string;
}

const Identifier = Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_]{0,62}$" });
const Entry = Type.Object(
  {
    url: Type.Optional(Type.String({ pattern: "^postgres(ql)?://" })),
    schema: Identifier,
    description: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
type Entry = Static<typeof Entry>;
const entryCheck = TypeCompiler.Compile(Entry);

/** The variables the catalogue is read from: DATASETS, or the single-dataset shorthand of earlier releases. */
export interface DatasetVariables {
  readonly DATASETS?: string;
  readonly DATASET_URL?: string;
  readonly DATASET_NAME?: string;
  readonly DATASET_SCHEMA?: string;
}

/** Server, database and role of a connection: two datasets sharing them could read each other's schema. */
function connectionOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}/${decodeURIComponent(u.pathname.slice(1))}?user=${decodeURIComponent(u.username)}`;
}

const databaseOf = (url: string): string => {
  const u = new URL(url);
  return `${u.hostname}:${u.port || "5432"}/${decodeURIComponent(u.pathname.slice(1))}`;
};

function entriesOf(vars: DatasetVariables): Array<[string, Entry, string]> {
  if (!vars.DATASETS) {
    const name = vars.DATASET_NAME ?? "demo";
    if (!DATASET_NAME.test(name)) throw new ConfigError("DATASET_NAME", "must match [a-z][a-z0-9_]{0,62}");
    const schema = vars.DATASET_SCHEMA ?? "demo_data";
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) throw new ConfigError("DATASET_SCHEMA", "must be an SQL identifier");
    return [[name, { url: vars.DATASET_URL, schema }, "DATASET_URL"]];
  }
  if (vars.DATASET_URL || vars.DATASET_NAME || vars.DATASET_SCHEMA) {
    throw new ConfigError("DATASETS", "is set together with DATASET_URL/DATASET_NAME/DATASET_SCHEMA: use one or the other");
  }
  let value: unknown;
  try {
    value = JSON.parse(vars.DATASETS);
  } catch {
    throw new ConfigError("DATASETS", "is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ConfigError("DATASETS", "is not an object of datasets by name");
  const entries = Object.entries(value);
  if (entries.length === 0 || entries.length > 64) throw new ConfigError("DATASETS", "must name 1 to 64 datasets");
  return entries.map(([name, entry]) => {
    if (!DATASET_NAME.test(name))
      throw new ConfigError("DATASETS", `dataset names must match [a-z][a-z0-9_]{0,62} (${JSON.stringify(name.slice(0, 64))} does not)`);
    if (!entryCheck.Check(entry)) {
      const first = entryCheck.Errors(entry).First();
      throw new ConfigError("DATASETS", `dataset ${name}${first ? ` at ${first.path || "/"}: ${first.message}` : " is not valid"}`);
    }
    return [name, entry, "DATASETS"];
  });
}

/**
 * Reads the datasets tool-exec serves (checked once at boot; an error names the variable, never a URL, which may
 * hold a password). A dataset without a URL reads the datasets database beside the application's as
 * steward_reader. Refused: a dataset in the application's own database, and two datasets on one connection
 * (same server, database and role), whose reader could then read the other's schema.
 */
export function parseDatasets(vars: DatasetVariables, databaseUrl: string): DatasetConfig[] {
  const seen = new Map<string, string>();
  const app = databaseOf(databaseUrl);
  return entriesOf(vars).map(([name, entry, variable]) => {
    const url = entry.url ?? defaultDatasetUrl(databaseUrl);
    try {
      new URL(url);
    } catch {
      throw new ConfigError(variable, `the URL of dataset ${name} is not a URL`);
    }
    if (databaseOf(url) === app) throw new ConfigError(variable, `dataset ${name} is in the application's own database; give it a database of its own`);
    const connection = connectionOf(url);
    const other = seen.get(connection);
    if (other)
      throw new ConfigError(
        variable,
        `datasets ${other} and ${name} share one database and role, so a query on one could read the other: give each its own role or database`,
      );
    seen.set(connection, name);
    return { name, url, schema: entry.schema, ...(entry.description ? { description: entry.description } : {}) };
  });
}

/**
 * The datasets the operator's list names that this tool-exec does not serve (a typo, or a dataset served
 * elsewhere): a tenant may hold a grant of one, and a focus on it is refused as not configured here.
 */
export function unservedDatasets(listed: DatasetTenants, datasets: readonly DatasetConfig[]): string[] {
  const served = new Set(datasets.map((d) => d.name));
  return listed.datasets.filter((name) => !served.has(name));
}
