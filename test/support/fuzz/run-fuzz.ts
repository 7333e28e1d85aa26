import type { FuzzFixture } from "./fixture";
import { sameWho } from "./fixture";
import { generateRequest, type FuzzRequest } from "./generate";
import { createLedger, judge, type Finding, type Ledger } from "./judge";
import { sendFuzzRequest, type Answer, type SendOptions } from "./send";

export interface FuzzOptions extends SendOptions {
  readonly baseUrl: string;
  readonly seed: number;
  readonly count: number;
  /** Requests in flight at once. */
  readonly concurrency: number;
  /** Only these request indexes (a replay of reported failures); default all of 0..count-1. */
  readonly only?: readonly number[];
}

/** Per route: how its requests were answered. */
export interface RouteTally {
  sent: number;
  ok: number;
  unauthenticated: number;
  rateLimited: number;
  otherClientError: number;
  raw: number;
}

export interface FuzzResult {
  readonly seed: number;
  readonly sent: number;
  readonly elapsedMs: number;
  readonly statuses: Map<string, number>;
  readonly routes: Map<string, RouteTally>;
  readonly streamsCut: number;
  readonly failures: Array<{ request: FuzzRequest; answer: Answer; finding: Finding }>;
  readonly ledger: Ledger;
  /** 2xx answers to a run's own creator on a control route, by run id and route. */
  readonly ownerControls: Map<string, Map<string, number>>;
  /** Seeded documents deleted (2xx), by id, with the deleting principal's tenant. */
  readonly deletedDocuments: Map<string, string[]>;
  /** `tenant/user` of every principal whose change of a membership or a dataset grant was accepted. */
  readonly tenantAdmins: Set<string>;
}

/** Sends the generated requests with bounded concurrency and checks every answer as it arrives. */
export async function runFuzz(fx: FuzzFixture, options: FuzzOptions): Promise<FuzzResult> {
  const indexes = options.only ?? Array.from({ length: options.count }, (_, i) => i);
  const ledger = createLedger(fx);
  const result: FuzzResult = {
    seed: options.seed,
    sent: 0,
    elapsedMs: 0,
    statuses: new Map(),
    routes: new Map(),
    streamsCut: 0,
    failures: [],
    ledger,
    ownerControls: new Map(),
    deletedDocuments: new Map(),
    tenantAdmins: new Set(),
  };
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (next < indexes.length) {
      const request = generateRequest(options.seed, indexes[next++], fx);
      const answer = await sendFuzzRequest(options.baseUrl, request, options);
      record(result, request, answer);
      for (const finding of judge(request, answer, ledger)) result.failures.push({ request, answer, finding });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return { ...result, elapsedMs: Date.now() - started };
}

function record(result: FuzzResult, r: FuzzRequest, a: Answer): void {
  (result as { sent: number }).sent += 1;
  const status = a.hang ? "hang" : a.status === null ? "dropped connection" : String(a.status);
  result.statuses.set(status, (result.statuses.get(status) ?? 0) + 1);
  const t = result.routes.get(r.route.name) ?? { sent: 0, ok: 0, unauthenticated: 0, rateLimited: 0, otherClientError: 0, raw: 0 };
  result.routes.set(r.route.name, t);
  t.sent += 1;
  if (r.raw) t.raw += 1;
  if (a.streamCut) (result as { streamsCut: number }).streamsCut += 1;
  const s = a.status ?? 0;
  if (s === 401) t.unauthenticated += 1;
  else if (s === 429) t.rateLimited += 1;
  else if (s >= 400 && s < 500) t.otherClientError += 1;
  if (s < 200 || s >= 300) return;
  t.ok += 1;

  const who = r.token.expect === "refuse" ? undefined : r.token.who;
  if (!who) return;
  const sent = r.raw?.toString("latin1") ?? r.target;
  if (s === 201 && (sent.startsWith("POST /v1/agents/runs ") || r.target.split("?")[0] === "/v1/agents/runs")) {
    const id = parseId(a.text);
    if (id) result.ledger.recordCreated(id, who);
  }
  if (r.run && sameWho(r.run.owner, who) && sent.includes(r.run.id) && /\/(input|confirmation|cancel)$/.test(r.route.name)) {
    const byRoute = result.ownerControls.get(r.run.id) ?? new Map<string, number>();
    result.ownerControls.set(r.run.id, byRoute);
    byRoute.set(r.route.name, (byRoute.get(r.route.name) ?? 0) + 1);
  }
  if (r.document && r.route.name.startsWith("DELETE ")) {
    result.deletedDocuments.set(r.document.id, [...(result.deletedDocuments.get(r.document.id) ?? []), who.tenant]);
  }
  if (/^(PUT|DELETE) \/v1\/admin\/(members|datasets)\//.test(r.route.name)) result.tenantAdmins.add(`${who.tenant}/${who.user}`);
}

function parseId(text: string): string | undefined {
  try {
    const id = (JSON.parse(text) as { id?: unknown }).id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}
