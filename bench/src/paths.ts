import { join, resolve } from "node:path";

/** bench/ (this file is compiled to bench/dist/paths.js). */
export const benchDir = resolve(__dirname, "..");
export const repoRoot = resolve(benchDir, "..");
export const resultsDir = join(benchDir, "results");
