import type { StoredRunEvent } from "@steward/contract";
import { NotFoundError, UnavailableError, type Logger } from "@steward/platform";
import type { AdminRead, AdminReadEntry, AdminRun } from "@steward/store";
import { parseAdminReadQuery, parseAdminRunQuery, type AdminRunQuery } from "../domain/admin-run-filter";
import type { Principal } from "../domain/principal";
import type { AdminRunStore } from "./ports";

/** Who reads, and the request's W3C trace context (its trace id goes into the audit record). */
export interface AdminReader {
  readonly principal: Principal;
  readonly traceparent: string;
}

export interface Page<T> {
  readonly items: T[];
  readonly page: number;
  readonly page_size: number;
  readonly total: number;
}

/**
 * The administrators' view of other users' runs (docs/admin-runs.md): any run of the caller's tenant. Every read
 * is recorded in the audit log before its answer is returned; a read that cannot be recorded is refused (503).
 * Whether the caller may read at all is the route's policy point (agent.run.admin_read), asked before this.
 */
export interface AdminRunReads {
  list(reader: AdminReader, query: AdminRunQuery): Promise<Page<AdminRun>>;
  /** A run of the tenant, or 404 (a run of another tenant is indistinguishable from none). */
  get(reader: AdminReader, runId: string): Promise<AdminRun>;
  /** A run's stored events after a sequence number, in order; 404 as `get`. */
  events(reader: AdminReader, runId: string, page: { after: number; limit: number }): Promise<StoredRunEvent[]>;
  /** The tenant's recorded admin reads, newest first (auditors: audit.decision.read). Not itself recorded. */
  audit(caller: Principal, query: { page?: string; page_size?: string; user?: string; run_id?: string }): Promise<Page<AdminRead>>;
}

/** The trace id of a W3C traceparent (`00-<trace id>-<span id>-<flags>`). */
const traceIdOf = (traceparent: string) => traceparent.split("-")[1] ?? "";

export function createAdminRunReads(deps: { runs: AdminRunStore; logger?: Logger }): AdminRunReads {
  /** Records the read, or refuses it: the record is the price of the answer. */
  async function audited(reader: AdminReader, entry: Omit<AdminReadEntry, "tenantId" | "userId" | "traceId">): Promise<void> {
    const { tenantId, userId } = reader.principal;
    try {
      await deps.runs.recordRead({ ...entry, tenantId, userId, traceId: traceIdOf(reader.traceparent) });
    } catch (err) {
      deps.logger?.warn({ err, route: entry.route, run_id: entry.runId }, "admin read not recorded in the audit log; refused");
      throw new UnavailableError("the read could not be recorded in the audit log; try again", { cause: err });
    }
  }

  async function tenantRun(reader: AdminReader, runId: string): Promise<AdminRun> {
    const run = await deps.runs.find(reader.principal.tenantId, runId);
    if (!run) throw new NotFoundError();
    return run;
  }

  return {
    async list(reader, query) {
      const { filter, page, pageSize, understood } = parseAdminRunQuery(query);
      const { items, total } = await deps.runs.list(reader.principal.tenantId, filter, { page, pageSize });
      await audited(reader, { route: "GET /v1/admin/runs", runId: null, query: understood, runIds: items.map((r) => r.id) });
      return { items, page, page_size: pageSize, total };
    },
    async get(reader, runId) {
      const run = await tenantRun(reader, runId);
      await audited(reader, { route: "GET /v1/admin/runs/:id", runId, query: {}, runIds: [runId] });
      return run;
    },
    async events(reader, runId, page) {
      await tenantRun(reader, runId);
      const events = await deps.runs.events(runId, page);
      await audited(reader, { route: "GET /v1/admin/runs/:id/events", runId, query: { after: page.after, limit: page.limit }, runIds: [runId] });
      return events;
    },
    async audit(caller, query) {
      const { filter, page, pageSize } = parseAdminReadQuery(query);
      const { items, total } = await deps.runs.reads(caller.tenantId, filter, { page, pageSize });
      return { items, page, page_size: pageSize, total };
    },
  };
}
