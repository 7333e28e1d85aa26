/**
 * Stress for the Cedar engine alone (docs/pdp-stability.md): no gRPC, PostgreSQL or NATS.
 * Each run is a child process that prepares the default set, then hammers `authorize` with varied requests,
 * keeps the last `keep` requests and answers alive (as in-flight decisions are under load, so scavenges promote
 * them and V8 changes its pretenuring decisions), and validates and prepares a new version every 5 000 decisions.
 * The parent runs them one after another (one core), reports how each ended and exits 1 if one crashed.
 *
 *   npm run stress -w @steward/policy -- [--runs=6] [--ops=60000] [--seconds=60] [--keep=10000] [--unguarded]
 *
 * `--unguarded` turns V8's JS→Wasm call inlining back on after the engine turned it off: the state before the fix.
 * V8 flags given to node (`node --trace-deopt dist/stress.js`) reach the children.
 */
import { fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { createCedarEngine, entitiesFor, resourceUid, type CedarAnswer, type CedarRequest, type PreparedPolicySet } from "@steward/pdp";

interface StressOptions {
  /** Child processes, one after another; default 6. */
  readonly runs: number;
  /** Decisions per run; default 60 000. */
  readonly ops: number;
  /** Time bound of one run in seconds; default 60 (the child stops by itself, the parent kills it 15 s later). */
  readonly seconds: number;
  /** Requests and answers kept alive; default 10 000 (0: none). */
  readonly keep: number;
  /** Re-enables JS→Wasm inlining (V8's default) after the engine is made; default false. */
  readonly unguarded: boolean;
}

type ChildMessage =
  { readonly kind: "progress"; readonly ops: number } | { readonly kind: "done"; readonly ops: number; readonly ms: number; readonly permits: number };

const policyDir = join(__dirname, "..", "..", "..", "infra", "policies");
const CHUNK = 1_000;
const PREPARE_EVERY = 5_000;

function optionsOf(argv: readonly string[]): StressOptions {
  const value = (name: string, fallback: number): number => {
    const raw = argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, got ${raw}`);
    return n;
  };
  return {
    runs: value("runs", 6),
    ops: value("ops", 60_000),
    seconds: value("seconds", 60),
    keep: value("keep", 10_000),
    unguarded: argv.includes("--unguarded"),
  };
}

const roleSets: readonly (readonly string[])[] = [["member"], ["admin"], [], ["member", "contractor"], ["r1", "r2", "r3", "r4", "r5", "member"]];
const runActions = ["agent.run.create", "agent.run.read", "agent.run.control"];

/** The decisions the PDP makes, in turn: run routes, tools, MCP tools, admin resources, and one Cedar rejects. */
const shapes: readonly ((i: number) => { action: string; resource: { type: string; id: string } })[] = [
  (i) => ({ action: runActions[i % 3], resource: { type: "run", id: `run-${i}` } }),
  () => ({ action: "knowledge.document.read", resource: { type: "tool", id: "knowledge_search" } }),
  (i) => ({ action: "knowledge.document.write", resource: { type: "tool", id: i % 4 ? "save_note" : "delete_docs" } }),
  (i) => ({ action: "mcp.tool.invoke", resource: { type: "tool", id: `mcp.srv.tool${i % 17}` } }),
  (i) => ({ action: i % 2 ? "policy.admin" : "audit.decision.read", resource: { type: "policy", id: "" } }),
  (i) => ({ action: runActions[i % 3], resource: { type: "tool", id: "save_note" } }),
];

function requestOf(i: number): CedarRequest {
  const { action, resource } = shapes[i % shapes.length](i);
  const roles = [...roleSets[(i >> 3) % roleSets.length]];
  const userId = `user-${i % 101}`;
  return {
    principal: { type: "Steward::User", id: userId },
    action,
    resource: resourceUid(resource.type, resource.id),
    context: { elevated: i % 13 === 0, run_id: i % 3 ? `run-${i % 997}` : "", step_no: i % 500 },
    entities: entitiesFor({ tenantId: `tenant-${i % 7}`, userId, roles, resource, toolSafety: i % 2 ? "read" : "write" }),
  };
}

async function hammer(options: StressOptions): Promise<void> {
  const send = (m: ChildMessage) => process.send?.(m);
  const engine = createCedarEngine(readFileSync(join(policyDir, "schema.cedarschema"), "utf8"));
  if (options.unguarded) setFlagsFromString("--turbo-inline-js-wasm-calls");
  const defaults = readFileSync(join(policyDir, "default.cedar"), "utf8");
  const variants = [
    defaults,
    `${defaults}\n@id("no-write-tools-for-contractors")\nforbid (principal in Steward::Role::"contractor", action, resource is Steward::Tool) when { resource.safety == "write" };`,
  ];
  const kept: { request: CedarRequest; answer: CedarAnswer }[] = [];
  const deadline = Date.now() + options.seconds * 1000;
  const started = performance.now();
  let set: PreparedPolicySet | undefined;
  let permits = 0;
  let i = 0;
  while (i < options.ops && Date.now() < deadline) {
    for (const end = Math.min(i + CHUNK, options.ops); i < end; i++) {
      if (i % PREPARE_EVERY === 0) {
        set = engine.prepare(`stress@${i / PREPARE_EVERY}`, engine.validate(variants[(i / PREPARE_EVERY) % variants.length]));
      }
      const request = requestOf(i);
      const answer = engine.authorize(set as PreparedPolicySet, request);
      if (answer.permit) permits++;
      if (options.keep > 0) kept[i % options.keep] = { request, answer };
    }
    send({ kind: "progress", ops: i });
    await new Promise((resolve) => setImmediate(resolve)); // lets the progress reach the parent before a crash
  }
  send({ kind: "done", ops: i, ms: performance.now() - started, permits });
}

interface RunOutcome {
  readonly ops: number;
  readonly done: { readonly ms: number; readonly permits: number } | null;
  readonly ending: string;
}

function oneRun(options: StressOptions, argv: readonly string[]): Promise<RunOutcome> {
  return new Promise((resolve) => {
    const child = fork(__filename, ["--child", ...argv], { stdio: ["ignore", "ignore", "pipe", "ipc"] });
    let ops = 0;
    let done: RunOutcome["done"] = null;
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-8_000)));
    child.on("message", (m: ChildMessage) => {
      ops = m.ops;
      if (m.kind === "done") done = { ms: m.ms, permits: m.permits };
    });
    let timedOut = false;
    const killer = setTimeout(() => (timedOut = child.kill("SIGKILL")), (options.seconds + 15) * 1000);
    child.on("exit", (code, signal) => {
      clearTimeout(killer);
      if (timedOut) return resolve({ ops, done, ending: "timed out (killed)" });
      const fatal = /unreachable code/.test(stderr)
        ? ` — V8 fatal "unreachable code"${/DoComputeBuiltinContinuation/.test(stderr) ? " in Deoptimizer::DoComputeBuiltinContinuation" : ""}`
        : "";
      const ending =
        code === 0 && done !== null
          ? "completed"
          : signal
            ? `crashed (${signal})${fatal}`
            : `failed (exit ${code})${fatal}: ${stderr.trim().split("\n").slice(-3).join(" | ")}`;
      resolve({ ops, done, ending });
    });
  });
}

async function supervise(options: StressOptions, argv: readonly string[]): Promise<number> {
  process.stdout.write(
    `stress: ${options.runs} run(s) of ${options.ops} decisions (≤ ${options.seconds} s), ${options.keep} kept alive, JS→Wasm inlining ${options.unguarded ? "ON (unguarded)" : "off (engine default)"}; Node ${process.version}\n`,
  );
  let crashed = 0;
  for (let run = 1; run <= options.runs; run++) {
    const r = await oneRun(options, argv);
    if (r.ending !== "completed") crashed++;
    const rate = r.done === null ? "" : ` (${r.done.permits} permitted), ${((r.done.ms * 1000) / Math.max(r.ops, 1)).toFixed(1)} µs per decision`;
    process.stdout.write(`run ${run}: ${r.ending} after ${r.ending === "completed" ? "" : "≈"}${r.ops} decisions${rate}\n`);
  }
  process.stdout.write(`stress: ${crashed} of ${options.runs} run(s) did not complete\n`);
  return crashed === 0 ? 0 : 1;
}

async function main(argv: readonly string[]): Promise<number> {
  const options = optionsOf(argv);
  if (!argv.includes("--child")) return supervise(options, argv);
  await hammer(options);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`stress failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  },
);
