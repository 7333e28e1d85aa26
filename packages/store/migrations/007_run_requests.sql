-- When agent.run.requested was last put on the bus for a run: the re-drive of runs queued too long uses it.
ALTER TABLE runs ADD COLUMN last_requested_at timestamptz NOT NULL DEFAULT clock_timestamp();
CREATE INDEX runs_queued_by_request ON runs (last_requested_at) WHERE state = 'queued';
