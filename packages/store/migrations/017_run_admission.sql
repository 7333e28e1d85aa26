-- Fair share across tenants: a run starts only once admitted, and a tenant has at most a configured number
-- of admitted runs in flight (queued or running). A run that would exceed it is deferred: it stays queued
-- here, its command is consumed, and it is admitted (its command put on the bus again) when one of the
-- tenant's runs ends or starts waiting for a person. Runner-managed, like the lease: not folded from events.
ALTER TABLE runs ADD COLUMN admitted_at timestamptz;
ALTER TABLE runs ADD COLUMN deferred_at timestamptz;
-- Runs already started are admitted; queued ones are admitted when a runner claims them.
UPDATE runs SET admitted_at = coalesce(started_at, created_at) WHERE state NOT IN ('queued');
CREATE INDEX runs_admitted_in_flight ON runs (tenant_id) WHERE admitted_at IS NOT NULL AND state IN ('queued', 'running');
CREATE INDEX runs_deferred ON runs (tenant_id, created_at) WHERE deferred_at IS NOT NULL AND state = 'queued';
