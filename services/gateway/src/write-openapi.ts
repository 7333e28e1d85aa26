import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildOpenApiDocument, formatOpenApiDocument } from "./openapi-document";

/** `npm run openapi -w @steward/gateway`: rewrites docs/openapi.json from the routes' schemas. */
async function main(): Promise<void> {
  const target = process.argv[2] ?? join(__dirname, "..", "..", "..", "docs", "openapi.json");
  writeFileSync(target, formatOpenApiDocument(await buildOpenApiDocument()));
  console.log(`wrote ${target}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
