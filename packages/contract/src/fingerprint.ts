import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json";

/**
 * A tool call's fingerprint: sha256 over the tool name and its canonical, normalised input. Equal calls get
 * equal fingerprints, which drives cycle detection and the idempotency record of a tool's result.
 */
export function toolFingerprint(toolName: string, normalisedInput: unknown): string {
  return createHash("sha256").update(toolName).update("\u0000").update(canonicalJson(normalisedInput)).digest("hex");
}

/**
 * The fingerprint an approval is bound to: the step, the tool and its arguments as the model wrote them, in
 * canonical form. Not the tool's normalised input: the user approves the call they were shown, and only that
 * call. Arguments that are not JSON are hashed as their text, so they never match a JSON call.
 */
export function callFingerprint(stepNo: number, toolName: string, argumentsJson: string): string {
  let args: string;
  try {
    args = `json:${canonicalJson(JSON.parse(argumentsJson || "{}"))}`;
  } catch {
    args = `text:${argumentsJson}`;
  }
  return createHash("sha256")
    .update("steward.call.v1")
    .update("\u0000")
    .update(String(stepNo))
    .update("\u0000")
    .update(toolName)
    .update("\u0000")
    .update(args)
    .digest("hex");
}
