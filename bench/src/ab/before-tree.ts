import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
}

function step(cwd: string, command: string, args: string[]): void {
  process.stdout.write(`ab: ${command} ${args.join(" ")} (in ${cwd})\n`);
  execFileSync(command, args, { cwd, stdio: ["ignore", "inherit", "inherit"] });
}

/** The commit a revision names (a branch, a tag, a short hash), or an error saying it names none. */
export function resolveRevision(repoRoot: string, rev: string): string {
  try {
    return git(repoRoot, ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
  } catch {
    throw new Error(`--against: ${rev} names no commit of this repository`);
  }
}

/** How the working tree is labelled: its commit, and whether uncommitted changes are measured with it. */
export function describeTree(repoRoot: string): string {
  const head = git(repoRoot, ["rev-parse", "--short", "HEAD"]);
  return git(repoRoot, ["status", "--porcelain", "--untracked-files=no"]) ? `${head}+changes` : head;
}

/**
 * A checkout of `commit` apart from the working tree (a detached git worktree under the system's temp
 * folder), installed and built as the README does, with the bench compiled. One prepared earlier for the same
 * commit (kept with `--keep`) is used as it is.
 */
export function prepareBeforeTree(repoRoot: string, commit: string): string {
  const dir = join(tmpdir(), `steward-ab-${commit.slice(0, 12)}`);
  if (existsSync(join(dir, "bench", "dist", "main.js")) && git(dir, ["rev-parse", "HEAD"]) === commit) {
    process.stdout.write(`ab: using the tree prepared earlier at ${dir}\n`);
    return dir;
  }
  if (existsSync(dir)) removeBeforeTree(repoRoot, dir);
  step(repoRoot, "git", ["worktree", "add", "--detach", "--force", dir, commit]);
  step(dir, "npm", ["ci", "--no-audit", "--no-fund"]);
  step(dir, "npx", ["turbo", "run", "build", "--output-logs=errors-only"]);
  step(join(dir, "bench"), "npx", ["tsc", "-p", "tsconfig.json"]);
  return dir;
}

/** Removes the checkout and git's record of it; a folder git does not know as a worktree is deleted alike. */
export function removeBeforeTree(repoRoot: string, dir: string): void {
  try {
    git(repoRoot, ["worktree", "remove", "--force", dir]);
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
  git(repoRoot, ["worktree", "prune"]);
}
