-- The runs projection (read model), updated in the same transaction as the events it folds.
CREATE TABLE runs (
  id                uuid PRIMARY KEY,
  tenant_id         text        NOT NULL,
  created_by        text        NOT NULL,
  thread_id         uuid,
  state             text        NOT NULL,
  mode              text        NOT NULL,
  input             text        NOT NULL,
  response_language text,
  created_at        timestamptz NOT NULL,
  started_at        timestamptz,
  finished_at       timestamptz,
  deadline_at       timestamptz NOT NULL,
  output            jsonb,
  error             jsonb,
  usage             jsonb       NOT NULL,
  version           integer     NOT NULL,
  idempotency_key   text,
  request_hash      text,
  lease_owner       text,
  lease_until       timestamptz
);

CREATE INDEX runs_by_creator ON runs (tenant_id, created_by, created_at DESC, id DESC);
CREATE INDEX runs_open_by_deadline ON runs (deadline_at) WHERE state IN ('queued', 'running');
CREATE UNIQUE INDEX runs_idempotency ON runs (tenant_id, created_by, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
