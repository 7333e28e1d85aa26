import type { DatasetConfig } from "./catalog";
import { createDatasetReader, type DatasetLimits, type DatasetReader } from "./reader";

/** The readers of the configured datasets, by name. */
export interface DatasetReaders {
  /** The configured datasets, in configuration order. */
  readonly datasets: readonly DatasetConfig[];
  /** The dataset's reader, opened at its first use; undefined for a name not configured. */
  reader(name: string): DatasetReader | undefined;
  close(): Promise<void>;
}

/**
 * One reader (its own small pool, its own role) per configured dataset, opened only when a call first reads it:
 * a dataset nobody focuses is never connected to.
 */
export function createDatasetReaders(
  datasets: readonly DatasetConfig[],
  limits: DatasetLimits,
  open: (config: DatasetConfig, limits: DatasetLimits) => DatasetReader = (c, l) => createDatasetReader(c.url, c.schema, l),
): DatasetReaders {
  const configs = new Map(datasets.map((d) => [d.name, d]));
  const opened = new Map<string, DatasetReader>();
  return {
    datasets,
    reader(name) {
      const config = configs.get(name);
      if (!config) return undefined;
      let reader = opened.get(name);
      if (!reader) {
        reader = open(config, limits);
        opened.set(name, reader);
      }
      return reader;
    },
    async close() {
      await Promise.all([...opened.values()].map((r) => r.close()));
      opened.clear();
    },
  };
}
