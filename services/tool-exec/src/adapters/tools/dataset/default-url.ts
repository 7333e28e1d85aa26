/** The suffix of the datasets database beside the application's (`steward` → `steward_datasets`). */
export const DATASETS_DATABASE_SUFFIX = "_datasets";

/**
 * Where the data tools read when DATASET_URL is not set: the same server as DATABASE_URL, the database
 * named after the application's with `_datasets` appended, as the steward_reader login role.
 */
export function defaultDatasetUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const app = decodeURIComponent(url.pathname.replace(/^\//, "")) || "postgres";
  url.pathname = `/${encodeURIComponent(app + DATASETS_DATABASE_SUFFIX)}`;
  url.username = "steward_reader";
  url.password = "";
  return url.toString();
}
