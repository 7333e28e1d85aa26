/** The routes of the administrators' run view whose every read is recorded (docs/admin-runs.md). */
export type AdminReadRoute = "GET /v1/admin/runs" | "GET /v1/admin/runs/:id" | "GET /v1/admin/runs/:id/events";

/** One read of other users' runs by an administrator, as it is recorded before it is answered. */
export interface AdminReadEntry {
  readonly tenantId: string;
  /** Who read: the administrator. */
  readonly userId: string;
  readonly route: AdminReadRoute;
  /** The run the path names; null for the list. */
  readonly runId: string | null;
  /** The query as understood: the list's filters and page, or the events' page; `{}` for one run. */
  readonly query: Readonly<Record<string, string | number>>;
  /** The runs the answer shows, in its order. */
  readonly runIds: readonly string[];
  /** The request's W3C trace id (32 hex digits). */
  readonly traceId: string;
}

/** A recorded read, as auditors see it (GET /v1/audit/admin-reads). */
export interface AdminRead {
  readonly id: number;
  readonly read_at: string;
  readonly user_id: string;
  readonly route: AdminReadRoute;
  readonly run_id: string | null;
  readonly query: Record<string, string | number>;
  readonly run_ids: string[];
  readonly trace_id: string;
}
