import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * The generated development signing secret: created once in the Steward home folder and shared by the
 * gateway and `npm run token`, so a fresh machine needs no configuration.
 */
export function developmentSecret(path: string): string {
  const existing = existingDevelopmentSecret(path);
  if (existing !== undefined) return existing;
  const secret = randomBytes(32).toString("base64url");
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: "w" });
  return secret;
}

/** The generated development secret if it was created already; never creates one. */
export function existingDevelopmentSecret(path: string): string | undefined {
  try {
    const existing = readFileSync(path, "utf8").trim();
    return existing.length >= 32 ? existing : undefined;
  } catch {
    return undefined; // not created yet
  }
}
