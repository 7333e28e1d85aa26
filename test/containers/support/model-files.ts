import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { transformFileSync } from "@swc/core";

const testRoot = join(__dirname, "..", "..");
const sources = ["support/fake-openai.ts", "containers/support/note-model.ts", "containers/support/model-server.ts"];

/**
 * The suite's model for a container: model-server.ts and what it imports, compiled to CommonJS into a
 * folder that keeps their relative layout. Resolves the folder and the entry point inside it.
 */
export function compileModelServer(): { dir: string; entry: string } {
  const dir = mkdtempSync(join(tmpdir(), "steward-model-"));
  for (const source of sources) {
    const { code } = transformFileSync(join(testRoot, source), {
      jsc: { parser: { syntax: "typescript" }, target: "es2022" },
      module: { type: "commonjs" },
    });
    const out = join(dir, source.replace(/\.ts$/, ".js"));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, code);
  }
  return { dir, entry: relative(dir, join(dir, "containers/support/model-server.js")) };
}
