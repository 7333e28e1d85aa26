import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repositoryRoot } from "./config";
import { UsageError } from "./errors";

/** Claims of a development token (as `npm run token` takes them). */
export interface DevClaims {
  readonly tenant: string;
  readonly user: string;
  readonly roles: readonly string[];
  /** e.g. "12h". */
  readonly ttl: string;
}

interface GatewayTools {
  developmentSecret(path: string): string;
  mintDevelopmentToken(secret: string, claims: { tenant: string; user: string; roles?: readonly string[]; expiresIn?: string }): Promise<string>;
}

const secretFile = (home: string) => join(home, "dev-jwt-secret");

/** True when a token can be minted without creating anything: STEWARD_JWT_SECRET, or the generated development secret. */
export function developmentSecretAvailable(env: NodeJS.ProcessEnv, home: string): boolean {
  if (env.STEWARD_JWT_SECRET) return true;
  try {
    return readFileSync(secretFile(home), "utf8").trim().length >= 32;
  } catch {
    return false;
  }
}

/**
 * Mints a development token the way `npm run token` does: the gateway's own minting code, signed with
 * STEWARD_JWT_SECRET or the generated development secret of the Steward home (created if missing, as there).
 */
export async function mintDevelopmentToken(env: NodeJS.ProcessEnv, home: string, claims: DevClaims): Promise<string> {
  const built = join(repositoryRoot, "services", "gateway", "dist", "tools.js");
  if (!existsSync(built))
    throw new UsageError("the gateway is not built yet: run `npm run build` (or `npm start`) first, or give a token with `steward login --token-stdin`");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const tools = require(built) as GatewayTools;
  const secret = env.STEWARD_JWT_SECRET || tools.developmentSecret(secretFile(home));
  return tools.mintDevelopmentToken(secret, { tenant: claims.tenant, user: claims.user, roles: claims.roles, expiresIn: claims.ttl });
}
