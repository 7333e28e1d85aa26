import { spawnSync } from "node:child_process";
import { join } from "node:path";

/**
 * The policy service's V8 fatal error under load (docs/pdp-stability.md) on demand: a lazy deopt of `authorize` while its call into Cedar is on the stack. Cedar's
 * glue JSON.stringifies the request from inside Wasm, so a `toJSON` in the context runs there and deoptimizes the
 * caller (V8 natives syntax, hence a child process). Run with and without the engine's V8 flag.
 */
function decideWhileDeoptimizing(opts: { inlineWasmCalls: boolean }) {
  const script = `
    const fs = require("node:fs");
    const { transformSync } = require(${JSON.stringify(require.resolve("@swc/core"))});
    require.extensions[".ts"] = (module, filename) => module._compile(transformSync(fs.readFileSync(filename, "utf8"), {
      filename, jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "commonjs" } }).code, filename);
    const { createCedarEngine } = require(${JSON.stringify(join(__dirname, "engine.ts"))});
    const dir = ${JSON.stringify(join(__dirname, "..", "..", "..", "..", "..", "infra", "policies"))};
    // Every call goes to Cedar (no answer remembered), as a new request does.
    const engine = createCedarEngine(fs.readFileSync(dir + "/schema.cedarschema", "utf8"), { rememberedAnswers: 0 });
    ${opts.inlineWasmCalls ? 'require("node:v8").setFlagsFromString("--turbo-inline-js-wasm-calls");' : ""}
    const set = engine.prepare("t1@1", engine.validate(fs.readFileSync(dir + "/default.cedar", "utf8")));
    let armed = false;
    const context = { toJSON() {
      if (armed) %DeoptimizeFunction(engine.authorize);
      return { elevated: false, run_id: "", step_no: 1 };
    } };
    const ask = () => engine.authorize(set, {
      principal: { type: "Steward::User", id: "u1" }, action: "agent.run.read", resource: { type: "Steward::Run", id: "r1" }, context,
      entities: [
        { uid: { type: "Steward::User", id: "u1" }, attrs: { tenant: { __entity: { type: "Steward::Tenant", id: "t1" } } }, parents: [{ type: "Steward::Role", id: "member" }] },
        { uid: { type: "Steward::Tenant", id: "t1" }, attrs: {}, parents: [] },
        { uid: { type: "Steward::Role", id: "member" }, attrs: {}, parents: [] },
        { uid: { type: "Steward::Run", id: "r1" }, attrs: {}, parents: [] },
      ],
    });
    %PrepareFunctionForOptimization(engine.authorize);
    for (let i = 0; i < 100; i++) ask(); // feedback for every call on the way into Cedar, so TurboFan inlines them
    %OptimizeFunctionOnNextCall(engine.authorize);
    ask();
    const turbofanned = (%GetOptimizationStatus(engine.authorize) & 64) !== 0;
    armed = true;
    process.stdout.write(JSON.stringify({ turbofanned, answer: ask() }));
  `;
  const child = spawnSync(process.execPath, ["--allow-natives-syntax", "-e", script], { encoding: "utf8", timeout: 30_000 });
  return { status: child.status, signal: child.signal, stdout: child.stdout, stderr: child.stderr };
}

describe("a deopt of the engine while Cedar runs", () => {
  it("kills the process when V8 inlines JS→Wasm calls (its default on Node 20: the crash in docs/pdp-stability.md)", () => {
    const r = decideWhileDeoptimizing({ inlineWasmCalls: true });
    expect(r.signal).toBe("SIGTRAP");
    expect(r.stderr).toMatch(/unreachable code/);
    expect(r.stderr).toMatch(/DoComputeBuiltinContinuation/);
  });

  it("is harmless with the engine's V8 flag, and the decision is answered", () => {
    const r = decideWhileDeoptimizing({ inlineWasmCalls: false });
    expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toEqual({ status: 0, signal: null, stderr: "" });
    expect(JSON.parse(r.stdout)).toEqual({ turbofanned: true, answer: { permit: true, policyIds: ["member-runs"], errors: [], erroredPolicyIds: [] } });
  });
});
