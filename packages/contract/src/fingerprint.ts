import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json";

/**
 * A tool call's fingerprint: sha256 over the tool name and its canonical, normalised input. Equal calls get
 * equal fingerprints, which drives cycle detection and the idempotency record of a tool's result.
 */
export function toolFingerprint(toolName: string, normalisedInput: unknown): string {
  return createHash("sha256")
    .update(toolName)
    .update("\u0000")
    .update(canonicalJson(normalisedInput))
    .digest("hex");
}
