import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_POLICY_NESTING, MAX_POLICY_OPERATORS, policyBoundsIssue } from "./policy-bounds";

const policy = (condition: string) => `@id("p")\npermit (principal, action, resource) when { ${condition} };`;

describe("how deep and how long a policy may be before Cedar sees it", () => {
  it("takes the default set and policies at the bounds", () => {
    const defaults = readFileSync(join(__dirname, "..", "..", "..", "..", "infra", "policies", "default.cedar"), "utf8");
    expect(policyBoundsIssue(defaults)).toBeNull();
    // The `when { }` block is one level of the 32.
    const most = MAX_POLICY_NESTING - 1;
    expect(policyBoundsIssue(policy(`${"(".repeat(most)}true${")".repeat(most)}`))).toBeNull();
    // A long list of entities is no chain: commas are not operators.
    expect(policyBoundsIssue(policy(`resource in [${Array(5000).fill('Steward::Tool::"t"').join(", ")}]`))).toBeNull();
  });

  it("refuses brackets, ifs, sets and records nested past the bound, and operator chains past theirs, naming the policy", () => {
    const over = MAX_POLICY_NESTING + 1;
    expect(policyBoundsIssue(policy(`${"(".repeat(over)}true${")".repeat(over)}`))).toMatch(/policy 1 nests deeper than 32/);
    expect(policyBoundsIssue(policy(`${"if true then ".repeat(over)}true${" else false".repeat(over)}`))).toMatch(/nests deeper/);
    expect(policyBoundsIssue(policy(`${"[".repeat(over)}1${"]".repeat(over)} == [1]`))).toMatch(/nests deeper/);
    expect(policyBoundsIssue(policy(`${"{a:".repeat(over)}1${"}".repeat(over)} == {a:1}`))).toMatch(/nests deeper/);
    expect(
      policyBoundsIssue(
        `${policy("true")}\n${policy(
          Array(MAX_POLICY_OPERATORS + 2)
            .fill("1")
            .join(" + ") + " > 0",
        )}`,
      ),
    ).toMatch(/policy 2 holds more than 512 operators/);
  });

  it("counts each policy apart, and nothing inside strings or comments", () => {
    const half = policy(Array(300).fill("1").join(" + ") + " > 0");
    expect(policyBoundsIssue(`${half}\n${half}`)).toBeNull();
    expect(policyBoundsIssue(policy(`context.run_id == "${"(".repeat(100)}"`))).toBeNull();
    expect(policyBoundsIssue(`// ${"(".repeat(100)}\n${policy("true")}`)).toBeNull();
  });
});
