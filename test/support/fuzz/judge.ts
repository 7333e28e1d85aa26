import type { FuzzFixture } from "./fixture";
import { sameWho } from "./fixture";
import type { FuzzRequest } from "./generate";
import type { Answer } from "./send";
import type { Who } from "./tokens";

/** What must never happen, by kind. */
export type FindingKind = "5xx" | "hang" | "dropped connection" | "not a problem document" | "read across principals" | "refused token accepted";

export interface Finding {
  readonly kind: FindingKind;
  readonly why: string;
}

const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const MARKERS = /fzmark-[0-9a-f]{16}/g;
const AUDIT = "GET /v1/audit/decisions";
const AUDITED_RUN = /"run_id":"([0-9a-f-]{36})"/g;

/**
 * Who owns what, as the fuzz learns it: the seeded runs, documents and policy sets, and every run a request
 * created. An answer is checked against it; a marker or id of somebody else's resource in a 2xx is a read
 * across principals.
 */
export function createLedger(fx: FuzzFixture) {
  const runOwners = new Map<string, Who>(fx.runs.map((r) => [r.id, r.owner]));
  const markers = new Map<string, { tenant: string; user?: string; what: string }>();
  for (const r of fx.runs) markers.set(r.marker, { ...r.owner, what: `run ${r.id}` });
  for (const d of fx.documents) markers.set(d.marker, { tenant: d.tenant, what: `document ${d.id}` });
  for (const t of fx.tenantMarks) markers.set(t.marker, { tenant: t.tenant, what: t.what });
  const documentTenants = new Map(fx.documents.map((d) => [d.id, d.tenant]));
  return {
    runOwners,
    /** A run a request created belongs to the request's principal. */
    recordCreated(id: string, owner: Who) {
      runOwners.set(id, owner);
    },
    /** Somebody else's resources named in an answer to `who` (undefined: a request with no valid principal). */
    foreignIn(text: string, who: Who | undefined, requestText: string, route: string, tenantWide = false): string[] {
      const found: string[] = [];
      const ours = (owner: Who) => (tenantWide ? owner.tenant === who?.tenant : sameWho(owner, who));
      for (const marker of text.match(MARKERS) ?? []) {
        const m = markers.get(marker);
        const theirs = who && m && m.tenant === who.tenant && (tenantWide || m.user === undefined || m.user === who.user);
        if (m && !theirs) found.push(`marker of ${m.what} (${m.tenant}/${m.user ?? "*"})`);
      }
      if (route === AUDIT) {
        // The tenant's decision log: every run of the tenant may appear as a decision's run; another tenant's
        // may not. Resource ids are what the tenant's own users asked for (any id they typed), so not checked.
        for (const [, id] of text.matchAll(AUDITED_RUN)) {
          const owner = runOwners.get(id);
          if (owner && owner.tenant !== who?.tenant) found.push(`decision of run ${id} of ${owner.tenant}/${owner.user}`);
        }
        return found;
      }
      for (const id of new Set(text.match(UUIDS) ?? [])) {
        // An id the request itself sent may come back (a membership named by it, say).
        if (requestText.includes(id)) continue;
        const owner = runOwners.get(id);
        const docTenant = documentTenants.get(id);
        if (owner && !ours(owner)) found.push(`run ${id} of ${owner.tenant}/${owner.user}`);
        if (docTenant && docTenant !== who?.tenant) found.push(`document ${id} of tenant ${docTenant}`);
      }
      return found;
    },
  };
}

export type Ledger = ReturnType<typeof createLedger>;

/** Every rule one answer breaks. */
export function judge(r: FuzzRequest, a: Answer, ledger: Ledger): Finding[] {
  const findings: Finding[] = [];
  if (a.hang) return [{ kind: "hang", why: `no complete answer within the bound (status ${a.status ?? "none"})` }];
  if (a.status === null) return [{ kind: "dropped connection", why: a.dropped ?? "no status" }];
  if (a.dropped) findings.push({ kind: "dropped connection", why: `status ${a.status}, then ${a.dropped}` });
  if (a.status >= 500) findings.push({ kind: "5xx", why: `${a.status} ${a.text.slice(0, 300)}` });
  if (a.status >= 400 && a.status < 500) {
    const why = problemFault(r, a);
    if (why) findings.push({ kind: "not a problem document", why });
  }
  const who = r.token.expect === "refuse" ? undefined : r.token.who;
  const ok = a.status >= 200 && a.status < 300;
  if (ok) {
    const requestText = `${r.target} ${r.raw?.toString("latin1") ?? ""} ${r.body?.toString("utf8") ?? ""}`;
    const tenantWide = r.route.tenantWide === true;
    const foreign = ledger.foreignIn(a.text, who, requestText, r.route.name, tenantWide);
    if (foreign.length) findings.push({ kind: "read across principals", why: `${a.status} to ${whoName(who)} holds ${foreign.join(", ")}` });
    const sent = r.raw?.toString("latin1") ?? r.target;
    const runOfCaller = r.run && (tenantWide ? r.run.owner.tenant === who?.tenant : sameWho(r.run.owner, who));
    if (r.run && sent.includes(r.run.id) && !runOfCaller) {
      findings.push({ kind: "read across principals", why: `${a.status} to ${whoName(who)} on ${r.run.owner.tenant}/${r.run.owner.user}'s run` });
    }
    if (r.document && sent.includes(r.document.id) && r.document.tenant !== who?.tenant) {
      findings.push({ kind: "read across principals", why: `${a.status} to ${whoName(who)} on tenant ${r.document.tenant}'s document` });
    }
  }
  const accepted = ok || a.status === 403 || a.status === 409 || a.status === 422;
  // Raw requests may name another path than their route's: what was sent decides.
  const sentPath = r.raw ? (/^\S+ (\S+)/.exec(r.raw.toString("latin1"))?.[1] ?? "") : r.target;
  const open = /^(https?:\/\/[^/]+)?\/(healthz|readyz)(\?|$)/.test(sentPath) || (r.route.open === true && !r.raw);
  if (r.token.expect === "refuse" && accepted && !open) {
    findings.push({ kind: "refused token accepted", why: `token ${JSON.stringify(r.token.label)} answered ${a.status}` });
  }
  return findings;
}

/** The MCP endpoint (docs/mcp.md): its session-level refusals are the MCP transport's JSON-RPC errors. */
const MCP_PATH = /^(https?:\/\/[^/]+)?\/mcp(\?|$)/;

/** A JSON-RPC error answer as the MCP transport sends it: `{jsonrpc: "2.0", error: {code, message}, id: null}`. */
function jsonRpcErrorFault(a: Answer): string | null {
  try {
    const body = JSON.parse(a.text) as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown }; id?: unknown };
    if (body.jsonrpc !== "2.0" || typeof body.error?.code !== "number" || typeof body.error.message !== "string" || body.id !== null) {
      return `${a.status} with body ${a.text.slice(0, 200)}`;
    }
    return null;
  } catch {
    return `${a.status} with a body that is not JSON: ${a.text.slice(0, 200)}`;
  }
}

/**
 * A 4xx must be `application/problem+json` whose `status` and numeric `code` say what it is; on `/mcp` it may
 * instead be the MCP transport's JSON-RPC error (`application/json`): an unknown session (404), a request
 * without one (400), what the client does not accept (406).
 */
function problemFault(r: FuzzRequest, a: Answer): string | null {
  const type = a.headers["content-type"] ?? "";
  const sentPath = r.raw ? (/^\S+ (\S+)/.exec(r.raw.toString("latin1"))?.[1] ?? "") : r.target;
  if (MCP_PATH.test(sentPath) && type.startsWith("application/json")) return jsonRpcErrorFault(a);
  if (!type.startsWith("application/problem+json")) return `${a.status} with content-type ${JSON.stringify(type)}: ${a.text.slice(0, 200)}`;
  // An answer to HEAD has no body; a raw HEAD the server could not read as one may still carry it: checked then.
  if (r.method === "HEAD" && (!r.raw || a.text === "")) return null;
  try {
    const body = JSON.parse(a.text) as { status?: unknown; code?: unknown };
    if (typeof body.code !== "number" || body.status !== a.status) return `${a.status} with body ${a.text.slice(0, 200)}`;
    return null;
  } catch {
    return `${a.status} with a body that is not JSON: ${a.text.slice(0, 200)}`;
  }
}

const whoName = (who: Who | undefined) => (who ? `${who.tenant}/${who.user.slice(0, 40)}` : "no valid principal");
