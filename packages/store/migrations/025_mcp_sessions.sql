-- Steward as an MCP server (docs/mcp.md): the sessions themselves, beside the decisions that name them
-- (policy_decisions.mcp_session_id). A session lives in one gateway's memory; this is its durable record: written
-- when it opens (before the initialize is answered) and when it closes (the first close wins). Never deleted.
CREATE TABLE mcp_sessions (
  id           uuid        PRIMARY KEY,
  tenant_id    text        NOT NULL,
  user_id      text        NOT NULL,
  mode         text        NOT NULL CHECK (mode IN ('observe', 'execute', 'admin')),
  opened_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  closed_at    timestamptz CHECK (closed_at >= opened_at),
  -- Why it closed, in the registry's words (idle, the client ended it, …); set together with closed_at.
  close_reason text        CHECK (char_length(close_reason) <= 200),
  CHECK ((closed_at IS NULL) = (close_reason IS NULL))
);
-- A tenant's sessions, newest first (GET /v1/audit/mcp-sessions).
CREATE INDEX mcp_sessions_by_tenant ON mcp_sessions (tenant_id, opened_at DESC, id DESC);

DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_gateway') THEN
    GRANT SELECT, INSERT ON mcp_sessions TO steward_gateway;
    GRANT UPDATE (closed_at, close_reason) ON mcp_sessions TO steward_gateway;
  END IF;
END
$$;
