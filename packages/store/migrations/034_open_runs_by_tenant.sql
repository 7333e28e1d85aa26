-- A tenant's open runs by state, for its administrators' view of the status (GET /v1/admin/status): open runs
-- are few beside all of a tenant's, so the index stays small however many runs have ended.
CREATE INDEX runs_open_by_tenant ON runs (tenant_id, state) WHERE state IN ('queued', 'running', 'awaiting_input', 'awaiting_confirmation');
