// What `npm start` sets up so that the services trust only each other (SPEC §10): mutual TLS on gRPC (a
// development CA and a certificate per service), a NATS user per service on the nats-server it runs itself,
// and a PostgreSQL role per service. The passwords live in the Steward home (credentials.json, private).
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { root } from "./paths.mjs";

const require = createRequire(import.meta.url);
const { ensureDevPki, services } = require("./dev-pki.cjs");
const { enableServiceLogins } = require("./service-roles.cjs");
const { keptSecrets } = require("./kept-secrets.cjs");

/** The services that talk to NATS (tool-exec does not, and has no user). */
const natsServices = ["gateway", "agent-runner", "policy"];

/** This home's passwords (NATS users, PostgreSQL roles), made once and kept, readable by this user only. */
export function localCredentials(home) {
  return keptSecrets(join(home, "credentials.json"), { nats: [...services, "operator"], postgres: services });
}

/** Writes the nats-server configuration with this home's users (for `namespace`); returns its path. */
export function writeNatsConfig(home, namespace, passwords) {
  const { natsServerConfig } = require(join(root, "packages", "platform", "dist"));
  const file = join(home, "nats-server.conf");
  writeFileSync(file, natsServerConfig({ namespace, passwords }), { mode: 0o600 });
  return file;
}

/**
 * Each service's own variables: its TLS files, its NATS user (when `natsUsers`), its DATABASE_URL as its role.
 * The owner's URL stays instead with the test hooks on (`testHooks`: the test tools make a table of their own)
 * or when the roles cannot be given LOGIN (`say` tells why); only development and test should run so.
 * Resolves with `{ perService, summary }`, the summary for the banner.
 */
export async function internalPlanes({ home, databaseUrl, natsUsers, creds, testHooks, say }) {
  const pki = ensureDevPki(join(home, "tls"));
  let roleUrls = null;
  if (!testHooks) {
    try {
      roleUrls = await enableServiceLogins(databaseUrl, creds.postgres);
    } catch (err) {
      say(`the services connect to PostgreSQL as the owner: their roles could not be given LOGIN (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  const perService = {};
  for (const service of services) {
    perService[service] = {
      ...pki.env[service],
      ...(roleUrls ? { DATABASE_URL: roleUrls[service] } : {}),
      ...(natsUsers && natsServices.includes(service) ? { NATS_USER: service, NATS_PASSWORD: creds.nats[service] } : {}),
    };
  }
  const summary = [
    `gRPC        mutual TLS (development CA and certificates in ${pki.dir})`,
    natsUsers
      ? `NATS        a user per service (nats-server.conf; the NATS CLI logs in as "operator", password in credentials.json)`
      : "NATS        no users: the server at NATS_URL was not started by Steward (development and test only)",
    roleUrls
      ? "PostgreSQL  a role per service (steward_gateway, steward_agent_runner, steward_tool_exec, steward_policy)"
      : `PostgreSQL  the owner's role for every service (${testHooks ? "the test hooks are on" : "development and test only"})`,
  ];
  return { perService, summary };
}
