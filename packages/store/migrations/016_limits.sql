-- Limits: rate limits shared by the gateway replicas, and outbox messages NATS refuses set aside.

-- Rate limits shared by every gateway replica: one row per bucket (a tenant, a user, a client address, for
-- all routes or for run creation), holding its current window (which starts with the first request after the
-- last window ended) and how much of it the replicas have leased. `bucket` is a scope and a hash of the
-- identity, never the identity itself.
CREATE TABLE rate_limit_buckets (
  bucket       text        PRIMARY KEY,
  window_start timestamptz NOT NULL,
  -- Requests of the window leased to replicas so far (never more than `capacity`).
  leased       integer     NOT NULL,
  -- What the last lease got (0: the window is spent); read back by the replica that asked.
  granted      integer     NOT NULL,
  capacity     integer     NOT NULL
);

CREATE INDEX rate_limit_buckets_window ON rate_limit_buckets (window_start);

-- Only the gateway limits requests: it leases (INSERT … ON CONFLICT DO UPDATE) and sweeps quiet buckets.
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_gateway') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON rate_limit_buckets TO steward_gateway;
  END IF;
END
$$;

-- The outbox relay sets aside a message NATS refuses (too large, a subject no stream takes, a JetStream
-- error for that message) after bounded attempts, so that it never blocks the messages behind it.
ALTER TABLE outbox
  ADD COLUMN attempts     integer NOT NULL DEFAULT 0,
  ADD COLUMN retry_at     timestamptz,
  ADD COLUMN last_error   text,
  ADD COLUMN set_aside_at timestamptz;

DROP INDEX outbox_pending;
CREATE INDEX outbox_pending ON outbox (id) WHERE published_at IS NULL AND set_aside_at IS NULL;
CREATE INDEX outbox_set_aside ON outbox (set_aside_at) WHERE set_aside_at IS NOT NULL;
