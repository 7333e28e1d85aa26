#!/usr/bin/env node
// Prints a development token: npm run token -- --tenant T --user U [--roles r1,r2]
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
const roles = values.roles ? values.roles.split(",").map((r) => r.trim()).filter(Boolean) : undefined;
process.stdout.write(`${await mintDevelopmentToken(secret, { tenant: values.tenant, user: values.user, roles, expiresIn: values.ttl })}\n`);
