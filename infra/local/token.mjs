#!/usr/bin/env node
// Prints a token the gateway accepts: npm run token -- --tenant T --user U [--roles r1,r2]. Signed with
// STEWARD_JWT_SECRET (else the development secret); outside development the gateway also wants the issuer and
// audience it is configured with, which are added when STEWARD_JWT_ISSUER / STEWARD_JWT_AUDIENCE are set (the
// container deployment's gateway has all three: `steward token` in its container).
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { root, stewardHome } from "./paths.mjs";

const require = createRequire(import.meta.url);
const { values } = parseArgs({
  options: { tenant: { type: "string" }, user: { type: "string" }, roles: { type: "string" }, ttl: { type: "string" } },
});
if (!values.tenant || !values.user) {
  process.stderr.write("usage: npm run token -- --tenant T --user U [--roles r1,r2] [--ttl 12h]\n");
  process.exit(2);
}
const built = join(root, "services", "gateway", "dist", "tools.js");
if (!existsSync(built)) {
  process.stderr.write("the gateway is not built yet: run `npm start` (or `npm run build`) first\n");
  process.exit(1);
}
const { developmentSecret, mintDevelopmentToken } = require(built);
const secret = process.env.STEWARD_JWT_SECRET || developmentSecret(join(stewardHome, "dev-jwt-secret"));
const roles = values.roles
  ? values.roles
      .split(",")
      .map((r) => r.trim())
      .filter(Boolean)
  : undefined;
const claims = { tenant: values.tenant, user: values.user, roles, expiresIn: values.ttl };
const issuer = process.env.STEWARD_JWT_ISSUER;
const audience = process.env.STEWARD_JWT_AUDIENCE;
process.stdout.write(`${issuer || audience ? await mintForIssuer(secret, claims, { issuer, audience }) : await mintDevelopmentToken(secret, claims)}\n`);

/** The same claims as mintDevelopmentToken's, with `iss` and `aud`. */
async function mintForIssuer(key, c, { issuer, audience }) {
  const { SignJWT } = require("jose");
  const jwt = new SignJWT({ tid: c.tenant, roles: [...(c.roles ?? ["member"])] })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(c.user)
    .setIssuedAt()
    .setExpirationTime(c.expiresIn ?? "12h");
  if (issuer) jwt.setIssuer(issuer);
  if (audience) jwt.setAudience(audience);
  return jwt.sign(new TextEncoder().encode(key));
}
