// Seeds the demo tenant's knowledge base from infra/demo/knowledge (once; re-running adds nothing).
import { createRequire } from "node:module";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "./paths.mjs";

const require = createRequire(import.meta.url);

/** The datasets database beside the application's (`steward` → `steward_datasets`); tool-exec's default DATASET_URL. */
export function datasetsUrl(databaseUrl) {
  const url = new URL(databaseUrl);
  url.pathname = `/${encodeURIComponent(decodeURIComponent(url.pathname.replace(/^\//, "")) + "_datasets")}`;
  return url.toString();
}

// The data tools read a database of their own: the reader never sees the application's tables (docs/datasets.md).
async function seedDatasets(databaseUrl) {
  const { createPool } = require(join(root, "packages", "platform", "dist"));
  const { ensureDatabase } = require(join(root, "packages", "store", "dist"));
  const url = datasetsUrl(databaseUrl);
  await ensureDatabase(url);
  const pool = createPool(url, { max: 1, applicationName: "steward-seed" });
  try {
    await pool.query(readFileSync(join(root, "infra", "demo", "dataset.sql"), "utf8"));
  } finally {
    await pool.end();
  }
}

export const demo = { tenant: "demo", user: "demo-user", dataset: "demo" };

// The tenant chooses which datasets its members may focus (docs/datasets.md): the demo tenant is granted the demo
// dataset when it holds no grant of it (an administrator's later change of its roles is kept).
async function grantDemoDataset(pool) {
  const { grantDataset, listDatasetGrants } = require(join(root, "packages", "store", "dist"));
  const held = await listDatasetGrants(pool, demo.tenant);
  if (held.some((g) => g.dataset === demo.dataset)) return;
  await grantDataset(pool, demo.tenant, demo.dataset, [], { userId: "steward-seed", reason: "the demo tenant reads the demo dataset" });
}

export async function seedDemo(databaseUrl) {
  const { createPool } = require(join(root, "packages", "platform", "dist"));
  const { addDocument } = require(join(root, "packages", "store", "dist"));
  const pool = createPool(databaseUrl, { max: 2, applicationName: "steward-seed" });
  try {
    const dir = join(root, "infra", "demo", "knowledge");
    let added = 0;
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith(".md"))
      .sort()) {
      const text = readFileSync(join(dir, file), "utf8");
      const title = (/^#\s+(.+)$/m.exec(text)?.[1] ?? file).trim();
      const body = text.replace(/^#\s+.+\n/m, "").trim();
      const exists = await pool.query("SELECT 1 FROM kb_documents WHERE tenant_id = $1 AND title = $2", [demo.tenant, title]);
      if (exists.rowCount === 0) {
        await addDocument(pool, { tenantId: demo.tenant, title, body });
        added++;
      }
    }
    await seedDatasets(databaseUrl);
    await grantDemoDataset(pool);
    return added;
  } finally {
    await pool.end();
  }
}
