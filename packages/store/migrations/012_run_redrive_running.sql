-- The re-drive also looks at running runs whose lease has lapsed (their command may be gone).
DROP INDEX IF EXISTS runs_queued_by_request;
CREATE INDEX runs_open_by_request ON runs (last_requested_at) WHERE state IN ('queued', 'running');
