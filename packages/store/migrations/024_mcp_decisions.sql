-- Steward as an MCP server (docs/mcp.md): a decision the gateway asks for an MCP session's call names
-- that session and its mode, so the decision log answers "what did this session do?". Null outside MCP.
ALTER TABLE policy_decisions
  ADD COLUMN mcp_session_id uuid,
  ADD COLUMN mcp_mode text CHECK (mcp_mode IN ('observe', 'execute', 'admin'));
CREATE INDEX policy_decisions_by_mcp_session ON policy_decisions (tenant_id, mcp_session_id) WHERE mcp_session_id IS NOT NULL;
