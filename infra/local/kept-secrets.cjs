// Passwords made once and kept in one private JSON file: `npm start`'s home (credentials.json) and the container
// deployment's planes folder (infra/containers/planes.cjs) both keep theirs this way, so that a second start
// finds the passwords the servers were given at the first.
"use strict";
const { randomBytes } = require("node:crypto");
const { existsSync, readFileSync, writeFileSync } = require("node:fs");

/**
 * Reads `file` (JSON: `{ group: { name: secret } }`), makes a random secret for every name of `groups`
 * (`{ group: [names] }`) it lacks, writes the file back (mode 0600) if anything was added, and returns it all.
 */
function keptSecrets(file, groups) {
  const kept = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  let changed = false;
  for (const [group, names] of Object.entries(groups)) {
    kept[group] ??= {};
    for (const name of names) {
      if (kept[group][name]) continue;
      kept[group][name] = randomBytes(24).toString("base64url");
      changed = true;
    }
  }
  if (changed) writeFileSync(file, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 });
  return kept;
}

module.exports = { keptSecrets };
