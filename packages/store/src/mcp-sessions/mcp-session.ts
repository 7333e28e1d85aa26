/** The modes an MCP session is opened in (docs/mcp.md). */
export type McpSessionMode = "observe" | "execute" | "admin";

/** A session as the gateway opens it: its id is the `Mcp-Session-Id` the client was given. */
export interface McpSessionOpening {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly mode: McpSessionMode;
}

/** A recorded session, as auditors see it (GET /v1/audit/mcp-sessions). */
export interface McpSessionRecord {
  readonly id: string;
  readonly user_id: string;
  readonly mode: McpSessionMode;
  /** When it was opened (ISO-8601 UTC, microseconds). */
  readonly opened_at: string;
  /** When it was closed; null while it is open (or its gateway stopped without saying so). */
  readonly closed_at: string | null;
  /** Why it closed, in the gateway's words; null while open. */
  readonly close_reason: string | null;
}

/** Which sessions to list; an absent filter does not filter. */
export interface McpSessionFilter {
  readonly userId?: string;
  readonly mode?: McpSessionMode;
  /** true: only sessions not closed; false: only closed ones. */
  readonly open?: boolean;
}

export const MCP_SESSION_COLUMNS = "id::text, user_id, mode, opened_at, closed_at, close_reason";
