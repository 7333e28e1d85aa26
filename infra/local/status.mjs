#!/usr/bin/env node
// `npm run status`: the platform as GET /v1/admin/status sees it, for a person at a terminal.
// Uses STEWARD_TOKEN when set (an admin's token); otherwise, in development, mints an admin token of the
// operators' tenant (STEWARD_OPERATOR_TENANT, `operator` as npm start sets it; --tenant for another tenant's own
// view) with the local development secret. Exit 0 when the platform is whole, 1 when degraded, 2 when the gateway is unreachable.
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { root, stewardHome } from "./paths.mjs";

const require = createRequire(import.meta.url);
const { values } = parseArgs({
  options: { url: { type: "string" }, json: { type: "boolean" }, tenant: { type: "string" } },
});
const url = (values.url || process.env.STEWARD_URL || `http://127.0.0.1:${process.env.GATEWAY_PORT || 8080}`).replace(/\/$/, "");

async function token() {
  if (process.env.STEWARD_TOKEN) return process.env.STEWARD_TOKEN;
  const built = join(root, "services", "gateway", "dist", "tools.js");
  if (!existsSync(built)) throw new Error("set STEWARD_TOKEN (an admin's token), or build the gateway for a development token");
  const { developmentSecret, mintDevelopmentToken } = require(built);
  const secret = process.env.STEWARD_JWT_SECRET || developmentSecret(join(stewardHome, "dev-jwt-secret"));
  const tenant = values.tenant || process.env.STEWARD_OPERATOR_TENANT || "operator";
  return mintDevelopmentToken(secret, { tenant, user: "operator", roles: ["admin"], expiresIn: "5m" });
}

const age = (s) => (s === null || s === undefined ? "-" : s < 120 ? `${s} s` : `${Math.round(s / 60)} min`);
const runsLine = (q) => `runs: ${q.queued} queued (oldest ${age(q.oldest_queued_age_seconds)}), ${q.running} running, ${q.awaiting} waiting for a person`;
const mark = (ok) => (ok ? "up  " : "DOWN");

function render(s) {
  const tenant = s.scope === "tenant" ? `, tenant ${s.tenant_id}` : "";
  const lines = [`Steward at ${url}${tenant}: ${s.status === "ok" ? "ok" : "DEGRADED"} (${s.checked_at})`];
  for (const p of s.problems) lines.push(`  ! ${p}`);
  if (s.scope === "tenant") {
    if (s.queue) lines.push(runsLine(s.queue));
    lines.push("(the whole platform is shown to the operators' tenant, STEWARD_OPERATOR_TENANT)");
    return `${lines.join("\n")}\n`;
  }
  lines.push("", "dependencies (as the gateway sees them)");
  for (const [name, c] of Object.entries(s.dependencies)) {
    lines.push(`  ${mark(c?.ok)} ${name}${c && !c.ok ? `  ${c.reason}` : ""}`);
  }
  lines.push("", "services");
  if (s.services.length === 0) lines.push("  (none answered)");
  for (const i of s.services) {
    const extra = typeof i.in_flight === "number" ? `  runs in hand ${i.in_flight}/${i.concurrency}` : "";
    lines.push(`  ${i.ready ? "ready" : "NOT READY"}  ${i.service.padEnd(12)} ${i.instance.padEnd(20)} since ${i.started_at}${extra}`);
    for (const r of i.reasons) lines.push(`      ${r}`);
  }
  const c = s.runners.consumer;
  lines.push(
    "",
    `runners attached ${s.runners.attached}, runs in hand ${s.runners.in_flight}` +
      (c ? `; consumer: ${c.pending} pending, ${c.ack_pending} in hand, ${c.redelivered} redelivered` : "; consumer: unknown"),
  );
  if (s.queue) {
    lines.push(runsLine(s.queue));
  }
  if (s.outbox) lines.push(`outbox: ${s.outbox.backlog} not yet on the bus (oldest ${age(s.outbox.oldest_age_seconds)})`);
  lines.push(`dead letters: ${s.dead_letters ? `${s.dead_letters.count}${s.dead_letters.last_at ? ` (last ${s.dead_letters.last_at})` : ""}` : "unknown"}`);
  return `${lines.join("\n")}\n`;
}

try {
  const res = await fetch(`${url}/v1/admin/status`, { headers: { authorization: `Bearer ${await token()}` } });
  const body = await res.json().catch(() => ({}));
  if (res.status !== 200) {
    process.stderr.write(`status: ${res.status} ${body.title ?? ""} ${body.detail ?? ""}\n`);
    process.exit(2);
  }
  process.stdout.write(values.json ? `${JSON.stringify(body, null, 2)}\n` : render(body));
  process.exit(body.status === "ok" ? 0 : 1);
} catch (err) {
  process.stderr.write(`status: the gateway at ${url} does not answer (${err instanceof Error ? err.message : String(err)})\n`);
  process.exit(2);
}
