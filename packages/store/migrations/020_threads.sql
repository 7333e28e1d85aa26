-- Threads (docs/threads.md): a conversation of several runs. A thread is event-sourced like a run: its stream (id =
-- the thread's id) is in the events table; this is its projection, written in the same statement as its
-- events (packages/store/src/threads). A run names its thread in runs.thread_id (from run.queued).
CREATE TABLE threads (
  id              uuid PRIMARY KEY,
  tenant_id       text        NOT NULL,
  created_by      text        NOT NULL,
  title           text,
  status          text        NOT NULL CHECK (status IN ('open', 'archived')),
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  archived_at     timestamptz,
  run_count       integer     NOT NULL DEFAULT 0,
  last_run_id     uuid,
  version         integer     NOT NULL,
  idempotency_key text,
  request_hash    text
);

-- The caller's open threads, most recently active first (GET /v1/threads).
CREATE INDEX threads_by_creator ON threads (tenant_id, created_by, updated_at DESC, id DESC) WHERE archived_at IS NULL;
CREATE UNIQUE INDEX threads_idempotency ON threads (tenant_id, created_by, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- A thread's runs in order (GET /v1/threads/:id) and its active run (POST /v1/agents/runs with thread_id).
CREATE INDEX runs_by_thread ON runs (thread_id, created_at, id) WHERE thread_id IS NOT NULL;

DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_gateway') THEN
    GRANT SELECT, INSERT, UPDATE ON threads TO steward_gateway;
  END IF;
  -- The runner reads a run's thread in a later increment (its history); it may read the projection now.
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_agent_runner') THEN
    GRANT SELECT ON threads TO steward_agent_runner;
  END IF;
END
$$;
