// The README's commands on a fresh clone: `npm start` and `npm test` install the dependencies themselves, so
// nothing they load before their install step may need a package from node_modules. Each launcher runs here
// from a copy of infra/local in a folder with no node_modules anywhere above it, with an `npm` on PATH that
// records its arguments and fails: a launcher that reaches its install step asks that npm for `ci`; one that
// loads a package first dies on the missing module before it does.
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const infraLocal = join(__dirname, "..", "..", "infra", "local");

let clone: string;
let npmCalls: string;

beforeAll(() => {
  clone = mkdtempSync(join(tmpdir(), "steward-fresh-"));
  cpSync(infraLocal, join(clone, "infra", "local"), { recursive: true });
  const bin = join(clone, "bin");
  mkdirSync(bin);
  npmCalls = join(clone, "npm-calls");
  writeFileSync(join(bin, "npm"), `#!/bin/sh\necho "$*" >> "${npmCalls}"\nexit 3\n`);
  chmodSync(join(bin, "npm"), 0o755);
});

afterAll(() => rmSync(clone, { recursive: true, force: true }));

function launch(script: string) {
  rmSync(npmCalls, { force: true });
  const env: Record<string, string> = {
    PATH: `${join(clone, "bin")}:${process.env.PATH}`,
    HOME: clone,
    STEWARD_HOME: join(clone, ".steward"),
  };
  const r = spawnSync(process.execPath, [join(clone, "infra", "local", script)], { cwd: clone, env, encoding: "utf8", timeout: 30_000 });
  const calls = existsSync(npmCalls) ? readFileSync(npmCalls, "utf8").trim().split("\n") : [];
  return { status: r.status, output: `${r.stdout}${r.stderr}`, calls };
}

describe("the launchers before their install step", () => {
  it("finds no node_modules above the copy (else the check below would prove nothing)", () => {
    const r = spawnSync(process.execPath, ["-e", "require.resolve('pg')"], { cwd: clone, env: { PATH: process.env.PATH ?? "" } });
    expect(r.status).not.toBe(0);
  });

  it.each([["start.mjs"], ["test.mjs"]])("%s loads with no node_modules and asks npm to install", (script) => {
    const { status, output, calls } = launch(script);
    expect(output).not.toMatch(/Cannot find (module|package)/);
    expect(calls).toEqual([expect.stringMatching(/^ci\b/)]);
    expect(status).not.toBe(0);
  });

  it("stop.mjs loads with no node_modules and finds nothing to stop", () => {
    const { status, output, calls } = launch("stop.mjs");
    expect(output).not.toMatch(/Cannot find (module|package)/);
    expect(calls).toEqual([]);
    expect(status).toBe(0);
  });
});
