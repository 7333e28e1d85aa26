// The internal planes of the container deployment (SPEC §10), as `npm start` has them: a CA and a certificate per
// service for mutual TLS on gRPC, a NATS user per service (and one for the cluster's routes), a PostgreSQL role
// per service, and the gateway's token secret. Everything lives in one private folder that compose.yaml mounts
// from and the container suite reads (test/containers/support/topology.ts); made once, then kept.
"use strict";
const { chmodSync, chownSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } = require("node:fs");
const { join, resolve } = require("node:path");
const { ensureDevPki, services } = require("../local/dev-pki.cjs");
const { roleUrl, serviceRoles } = require("../local/service-roles.cjs");
const { keptSecrets } = require("../local/kept-secrets.cjs");

const root = resolve(__dirname, "..", "..");

/** The services that talk to NATS (tool-exec does not, and gets no NATS user in its variables). */
const natsServices = ["gateway", "agent-runner", "policy"];

/** Where each service finds its TLS files inside its container (the folder `<planes>/<service>` is mounted there). */
const tlsMount = "/run/steward";
const tlsEnv = { STEWARD_TLS_CA: `${tlsMount}/ca.crt`, STEWARD_TLS_CERT: `${tlsMount}/tls.crt`, STEWARD_TLS_KEY: `${tlsMount}/tls.key` };

/** The owner's URL on the deployment's own network (compose service `postgres`, database `steward`). */
function ownerUrl(password) {
  return `postgres://steward:${encodeURIComponent(password)}@postgres:5432/steward`;
}

/** `KEY=value` lines, as compose's `env_file` and `readEnvFile` read them. */
function envFileText(vars) {
  return `${Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n")}\n`;
}

/** The variables of an env file written here. */
function readEnvFile(file) {
  const vars = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const at = line.indexOf("=");
    if (at > 0 && !line.startsWith("#")) vars[line.slice(0, at)] = line.slice(at + 1);
  }
  return vars;
}

/**
 * The nats-server configuration every node of the cluster loads: Steward's users and subject permissions
 * (`natsServerConfig`), and, with more than one node, the cluster block whose routes must log in as `route`.
 * The node's name, its client port and JetStream's store stay on its command line.
 */
function natsConfig(passwords, nodes) {
  const { natsServerConfig } = require(join(root, "packages", "platform", "dist"));
  const users = natsServerConfig({ namespace: "", passwords });
  if (nodes <= 1) return users;
  const routes = Array.from({ length: nodes }, (_, i) => JSON.stringify(`nats://route:${passwords.route}@nats${i + 1}:6222`));
  return `${users}
# The cluster's routes log in too: nobody joins the cluster without the route password.
cluster {
  name: "steward"
  listen: "0.0.0.0:6222"
  authorization { user: "route", password: ${JSON.stringify(passwords.route)} }
  routes: [ ${routes.join(", ")} ]
}
`;
}

/** Writes a file readable by its owner only. */
function writePrivate(file, text) {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/**
 * Makes (or completes) the planes folder `dir`, mode 0700:
 *   credentials.json      every password and the JWT secret (kept: a second run changes nothing)
 *   pki/                  the CA (its key stays here) and each service's certificate (dev-pki.cjs)
 *   <service>/            what its container mounts at /run/steward: ca.crt, tls.crt, tls.key
 *   <service>.env         its DATABASE_URL as its own role, its NATS user; the gateway's JWT secret
 *   nats/nats-server.conf the users, their permissions and the cluster's route login
 *   postgres.env, prepare.env   the owner's password; the owner's URL and the roles' passwords for `prepare`
 *   model.env             the runners' model (LLM_*), left for the operator; never overwritten
 * `uid`: the user the services run as in their containers (the image's `nobody`), who must read its own
 * folder; applied only when this process may change owners. Returns the folder's credentials.
 */
function writePlanes(dir, { natsNodes = 3, uid = 65534 } = {}) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const creds = keptSecrets(join(dir, "credentials.json"), {
    nats: [...services, "operator", "route"],
    postgres: [...services, "owner"],
    jwt: ["gateway"],
  });
  const pki = ensureDevPki(join(dir, "pki"), services, "/O=Steward/CN=Steward deployment CA");
  const mayChown = typeof process.getuid === "function" && process.getuid() === 0;
  for (const service of services) {
    const own = join(dir, service);
    mkdirSync(own, { recursive: true, mode: 0o700 });
    chmodSync(own, 0o700);
    const files = pki.env[service];
    const copies = { "ca.crt": files.STEWARD_TLS_CA, "tls.crt": files.STEWARD_TLS_CERT, "tls.key": files.STEWARD_TLS_KEY };
    for (const [name, from] of Object.entries(copies)) {
      rmSync(join(own, name), { force: true });
      copyFileSync(from, join(own, name));
      chmodSync(join(own, name), 0o400);
      if (mayChown) chownSync(join(own, name), uid, uid);
    }
    chmodSync(own, 0o500);
    if (mayChown) chownSync(own, uid, uid);
    const vars = {
      DATABASE_URL: roleUrl(ownerUrl(creds.postgres.owner), serviceRoles[service], creds.postgres[service]),
      ...(natsServices.includes(service) ? { NATS_USER: service, NATS_PASSWORD: creds.nats[service] } : {}),
      ...(service === "gateway" ? { STEWARD_JWT_SECRET: creds.jwt.gateway } : {}),
      ...tlsEnv,
    };
    writePrivate(join(dir, `${service}.env`), envFileText(vars));
  }
  mkdirSync(join(dir, "nats"), { recursive: true, mode: 0o700 });
  writePrivate(join(dir, "nats", "nats-server.conf"), natsConfig(creds.nats, natsNodes));
  writePrivate(join(dir, "postgres.env"), envFileText({ POSTGRES_PASSWORD: creds.postgres.owner }));
  const roles = Object.fromEntries(services.map((s) => [s, creds.postgres[s]]));
  writePrivate(join(dir, "prepare.env"), envFileText({ DATABASE_URL: ownerUrl(creds.postgres.owner), STEWARD_ROLE_PASSWORDS: JSON.stringify(roles) }));
  const model = join(dir, "model.env");
  try {
    writeFileSync(model, '# The agent-runners\' model: LLM_BASE_URL=, LLM_API_KEY=, LLM_MODEL= (docs/operations.md, "Containers").\n', {
      mode: 0o600,
      flag: "wx",
    });
  } catch (err) {
    if (err.code !== "EEXIST") throw err;
  }
  return creds;
}

module.exports = { writePlanes, readEnvFile, natsServices, tlsMount };

// `steward planes <dir>` (setup.sh runs it in the Steward image, as root, on the folder it keeps):
if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write("usage: steward planes <dir>\n");
    process.exit(2);
  }
  const natsNodes = Number(process.env.STEWARD_NATS_NODES ?? 3);
  const uid = Number(process.env.STEWARD_SERVICE_UID ?? 65534);
  writePlanes(dir, { natsNodes, uid });
  process.stderr.write(`planes: certificates, NATS users, PostgreSQL roles and the JWT secret in ${dir} (${natsNodes} NATS nodes)\n`);
}
