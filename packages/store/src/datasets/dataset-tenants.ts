import { ConfigError } from "@steward/platform";
import { DATASET_NAME } from "./dataset-grant";

/**
 * The operator's list of the tenants each dataset may be granted to (DATASET_TENANTS). A tenant's administrator
 * grants its members only datasets listed for the tenant; a dataset listed for nobody, or not listed, is no
 * dataset at all to a tenant: both answer alike.
 */
export interface DatasetTenants {
  /** True when `tenantId` may hold a grant of `dataset`. */
  allows(dataset: string, tenantId: string): boolean;
  /** The datasets the list names, sorted. */
  readonly datasets: readonly string[];
}

/** Every tenant, in place of a list of tenants. */
export const EVERY_TENANT = "*";
/** The most datasets the list may name, and the most tenants one dataset may list. */
export const DATASET_TENANTS_MAX = { datasets: 64, tenants: 10_000 } as const;

/** The list that lets no tenant have any dataset (DATASET_TENANTS unset). */
export const NO_DATASET_TENANTS: DatasetTenants = Object.freeze({ allows: () => false, datasets: Object.freeze([]) });

/**
 * Parses DATASET_TENANTS: a JSON object of dataset names, each with an array of tenant ids or `"*"` (every
 * tenant), e.g. `{"demo":["demo"],"ledger":["globex","initech"]}`. Unset: no tenant may have a dataset. A bad
 * value is a ConfigError naming the variable.
 */
export function parseDatasetTenants(raw: string | undefined, variable = "DATASET_TENANTS"): DatasetTenants {
  if (raw === undefined || raw.trim() === "") return NO_DATASET_TENANTS;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ConfigError(variable, "is not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ConfigError(variable, "is not an object of datasets by name");
  const entries = Object.entries(value);
  if (entries.length > DATASET_TENANTS_MAX.datasets) throw new ConfigError(variable, `names more than ${DATASET_TENANTS_MAX.datasets} datasets`);
  const lists = new Map<string, ReadonlySet<string> | typeof EVERY_TENANT>();
  for (const [name, tenants] of entries) {
    if (!DATASET_NAME.test(name))
      throw new ConfigError(variable, `dataset names must match [a-z][a-z0-9_]{0,62} (${JSON.stringify(name.slice(0, 64))} does not)`);
    if (tenants === EVERY_TENANT) {
      lists.set(name, EVERY_TENANT);
      continue;
    }
    const valid =
      Array.isArray(tenants) && tenants.length <= DATASET_TENANTS_MAX.tenants && tenants.every((t) => typeof t === "string" && t.length > 0 && t.length <= 256);
    if (!valid) throw new ConfigError(variable, `dataset ${name}: give an array of at most ${DATASET_TENANTS_MAX.tenants} tenant ids, or "*" for every tenant`);
    lists.set(name, new Set(tenants as string[]));
  }
  return Object.freeze({
    allows(dataset: string, tenantId: string): boolean {
      const list = lists.get(dataset);
      return list === EVERY_TENANT || (list !== undefined && list.has(tenantId));
    },
    datasets: Object.freeze([...lists.keys()].sort()),
  });
}
