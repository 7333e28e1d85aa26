// The PostgreSQL role of each service (made and granted by migration 014): `npm start` gives each one LOGIN and
// a password, and hands each service a DATABASE_URL of its own. Migrations keep running as the owner.
// `pg` is required where it is used: `npm start` loads this file before it has installed anything.
"use strict";

/** Service → its role (packages/store/migrations/014_service_roles.sql). */
const serviceRoles = {
  gateway: "steward_gateway",
  "agent-runner": "steward_agent_runner",
  "tool-exec": "steward_tool_exec",
  policy: "steward_policy",
};

/** `databaseUrl` with the role and password of a service in place of the owner's. */
function roleUrl(databaseUrl, role, password) {
  const url = new URL(databaseUrl);
  url.username = role;
  url.password = password;
  return url.toString();
}

/**
 * Gives every service role LOGIN and its password (`passwords` by service), connected as the owner at
 * `databaseUrl`; resolves with each service's DATABASE_URL. Roles are cluster-wide: two starters altering
 * the same role at once may collide ("tuple concurrently updated"), which is tried again.
 */
async function enableServiceLogins(databaseUrl, passwords) {
  const pg = require("pg");
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const urls = {};
    for (const [service, role] of Object.entries(serviceRoles)) {
      const found = await client.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role]);
      if (found.rowCount === 0) throw new Error(`role ${role} does not exist: the migrations make it (014_service_roles.sql)`);
      const sql = `ALTER ROLE ${client.escapeIdentifier(role)} WITH LOGIN PASSWORD ${client.escapeLiteral(passwords[service])}`;
      for (let attempt = 1; ; attempt++) {
        try {
          await client.query(sql);
          break;
        } catch (err) {
          if (attempt >= 5 || err.code !== "XX000") throw err;
          await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
        }
      }
      urls[service] = roleUrl(databaseUrl, role, passwords[service]);
    }
    return urls;
  } finally {
    await client.end();
  }
}

module.exports = { serviceRoles, roleUrl, enableServiceLogins };
