// `npm run ab -- --against <rev> [--pairs N] [--keep] [bench options]`: the bench run on this working tree and
// on `<rev>` built apart, alternating, so that a drifting machine weighs on both sides alike, and each tree going
// first in every other pair (after, before; before, after; …), so that a run's place in its pair weighs on both
// alike too; then every measure side by side. Bench options (`--quick`, `--only=floors,steward`, …) go to each run
// unchanged.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { compareTable, type LabelledRun } from "./ab/compare-table";
import { describeTree, prepareBeforeTree, removeBeforeTree, resolveRevision } from "./ab/before-tree";
import { pairOrder } from "./ab/pair-order";
import { readOptions } from "./options";
import { repoRoot, resultsDir } from "./paths";
import { machineLines, type Row } from "./report";
import type { Machine } from "./machine";

interface AbOptions {
  readonly against: string;
  readonly pairs: number;
  readonly keep: boolean;
  /** Passed to every bench run. */
  readonly benchArgs: string[];
}

function readAbOptions(argv: string[]): AbOptions {
  const { values, tokens } = parseArgs({
    args: argv,
    strict: false,
    tokens: true,
    options: { against: { type: "string" }, pairs: { type: "string" }, keep: { type: "boolean" } },
  });
  const own = new Set(["against", "pairs", "keep"]);
  const benchArgs: string[] = [];
  for (const t of tokens) {
    if (t.kind === "positional") throw new Error(`unexpected argument ${t.value}: bench options take the form --name=value`);
    if (t.kind === "option" && !own.has(t.name)) benchArgs.push(t.value === undefined ? t.rawName : `${t.rawName}=${t.value}`);
  }
  if (typeof values.against !== "string" || values.against === "") throw new Error("--against <rev> is required: the commit to compare this working tree with");
  const pairs = values.pairs === undefined ? 2 : Number(values.pairs);
  if (!Number.isInteger(pairs) || pairs < 1 || pairs > 10) throw new Error("--pairs: a whole number from 1 to 10");
  readOptions(benchArgs); // the bench's own check of its options, before anything is built
  return { against: values.against, pairs, keep: values.keep === true, benchArgs };
}

/** One bench run in `tree`, its output shown as it comes; resolves to the results it wrote. */
function benchRun(tree: string, args: string[]): Promise<{ rows: Row[]; machine: Machine; stamp: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["dist/main.js", ...args], { cwd: join(tree, "bench"), stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      out += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const written = /^results: (.+\.json)$/m.exec(out);
      // Exit code 1 means a phase failed: its rows are missing, the others still count.
      if (!written) return reject(new Error(`the bench in ${tree} ended (code ${code}) without writing results`));
      resolve(JSON.parse(readFileSync(written[1], "utf8")));
    });
  });
}

async function main(): Promise<void> {
  const options = readAbOptions(process.argv.slice(2));
  const commit = resolveRevision(repoRoot, options.against);
  const afterLabel = describeTree(repoRoot);
  const beforeLabel = commit.slice(0, 7);
  process.stdout.write(`ab: building this working tree (${afterLabel})\n`);
  execFileSync("npx", ["turbo", "run", "build", "--output-logs=errors-only"], { cwd: repoRoot, stdio: ["ignore", "inherit", "inherit"] });
  const before = prepareBeforeTree(repoRoot, commit);
  const runs: LabelledRun[] = [];
  let machine: Machine | undefined;
  let firstStamp = "";
  try {
    for (let pair = 1; pair <= options.pairs; pair++) {
      const sides = {
        after: { label: `after ${afterLabel} #${pair}`, tree: repoRoot },
        before: { label: `before ${beforeLabel} #${pair}`, tree: before },
      };
      const pairRuns: Partial<Record<keyof typeof sides, LabelledRun>> = {};
      for (const [place, side] of pairOrder(pair).entries()) {
        const { label, tree } = sides[side];
        process.stdout.write(`\nab: ${label}\n`);
        const result = await benchRun(tree, options.benchArgs);
        machine ??= result.machine;
        firstStamp ||= result.stamp;
        pairRuns[side] = { label: `${label} (${place === 0 ? "ran first" : "ran second"})`, rows: result.rows };
      }
      // The table keeps after, before in every pair, whichever ran first.
      runs.push(pairRuns.after!, pairRuns.before!);
    }
  } finally {
    if (!options.keep) removeBeforeTree(repoRoot, before);
  }
  const md = [
    `# Steward bench A/B ${firstStamp}: ${afterLabel} (after) against ${beforeLabel} (before)`,
    "",
    `bench options: ${options.benchArgs.join(" ") || "(none: full run)"}; ${options.pairs} pair(s), alternating; this tree first in odd pairs, ${beforeLabel} first in even ones`,
    machine ? machineLines(machine) : "",
    "",
    compareTable(runs),
  ].join("\n");
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `ab-${firstStamp}.md`);
  writeFileSync(file, `${md}\n`);
  process.stdout.write(`\n${md}\n\nA/B table: ${file}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`ab: ${err.message}\n`);
  process.exit(1);
});
