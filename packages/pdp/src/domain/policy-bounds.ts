import { tokens } from "./cedar-tokens";

/**
 * How deep one policy may nest: brackets `( [ {` open at once plus the `if`s begun in it. Cedar parses and checks a
 * policy recursively inside its WebAssembly, on the process's one stack: measured here, 256 nested parentheses, 128
 * nested sets or records, or 200 each of parentheses, `if`s and `+` together overflowed it, and the overflow left the
 * module broken for every later call of every tenant (docs/policy.md). 32 is the JSON bodies' bound too.
 */
export const MAX_POLICY_NESTING = 32;

/**
 * How many operator marks (`& | + - * = ! < >`, each character once) and operator words (`in has like is`) one
 * policy may hold: a chain of binary operators nests as deep as it is long (2,000 `+` or `||` terms overflowed).
 */
export const MAX_POLICY_OPERATORS = 512;

const OPERATOR_MARKS = new Set(["&", "|", "+", "-", "*", "=", "!", "<", ">"]);
const OPERATOR_WORDS = new Set(["in", "has", "like", "is"]);
const OPENING = new Set(["(", "[", "{"]);
const CLOSING = new Set([")", "]", "}"]);

/**
 * Why a set's text is refused before Cedar sees it, or null: a policy (text up to its `;` at the outer level) nesting
 * deeper than MAX_POLICY_NESTING or holding more than MAX_POLICY_OPERATORS operators. The `if`s begun in a policy
 * count to its end, which errs one way only: towards refusing a policy Cedar could take.
 */
export function policyBoundsIssue(text: string): string | null {
  let brackets = 0;
  let ifs = 0;
  let operators = 0;
  let policy = 1;
  for (const token of tokens(text)) {
    if (token.kind === "mark" && token.text === ";" && brackets === 0) {
      policy += 1;
      ifs = 0;
      operators = 0;
      continue;
    }
    if (token.kind === "mark" && OPENING.has(token.text)) brackets += 1;
    else if (token.kind === "mark" && CLOSING.has(token.text)) brackets = Math.max(0, brackets - 1);
    else if (token.kind === "word" && token.text === "if") ifs += 1;
    if ((token.kind === "mark" && OPERATOR_MARKS.has(token.text)) || (token.kind === "word" && OPERATOR_WORDS.has(token.text))) operators += 1;
    if (brackets + ifs > MAX_POLICY_NESTING) return `policy ${policy} nests deeper than ${MAX_POLICY_NESTING} levels (brackets and ifs)`;
    if (operators > MAX_POLICY_OPERATORS) return `policy ${policy} holds more than ${MAX_POLICY_OPERATORS} operators; split it into several policies`;
  }
  return null;
}
