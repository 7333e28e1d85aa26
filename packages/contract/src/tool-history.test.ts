import { consecutiveFailures, detectCycle } from "./tool-history";
import type { ToolOutcomeRecord } from "./run/fold";

const rec = (fingerprint: string, tool_name = "t", result_code = "ok"): ToolOutcomeRecord => ({ tool_name, fingerprint, result_code });
const seq = (prints: string) => [...prints].map((p) => rec(p, `tool_${p}`));

describe("detectCycle", () => {
  it.each([
    ["aaa", 1],
    ["abab" + "ab", 2],
    ["xabcabcabc", 3],
    ["abcdabcdabcd", 4],
  ])("finds the period in %p", (prints, length) => {
    expect(detectCycle(seq(prints))).toEqual({ length, tool_name: `tool_${prints[prints.length - 1]}` });
  });

  it.each(["aa", "abab", "abcab", "abcdeabcdeabcde", "aab", "abcabcabd"])("finds no cycle in %p", (prints) => {
    expect(detectCycle(seq(prints))).toBeNull();
  });

  it("prefers the shortest period", () => {
    expect(detectCycle(seq("aaaaaaaaaaaa"))?.length).toBe(1);
  });

  it("ignores calls without a fingerprint (answered without reaching tool-exec)", () => {
    expect(detectCycle([rec(""), rec(""), rec("")])).toBeNull();
  });
});

describe("consecutiveFailures", () => {
  const h = [rec("1", "a", "60302"), rec("2", "b", "ok"), rec("3", "a", "60302"), rec("4", "b", "60302"), rec("5", "a", "60302")];

  it("counts the tool's latest failures in a row, skipping other tools", () => {
    expect(consecutiveFailures(h, "a", "60302")).toBe(3);
    expect(consecutiveFailures(h, "b", "60302")).toBe(1);
  });

  it("stops at the tool's last success", () => {
    expect(consecutiveFailures([...h, rec("6", "a", "ok")], "a", "60302")).toBe(0);
  });
});
