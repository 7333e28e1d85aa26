-- The administrators' view of other users' runs (docs/admin-runs.md): every read through
-- GET /v1/admin/runs[/:id[/events]] is recorded here before it is answered; a read that cannot be recorded
-- is refused. Append-only: nobody updates or deletes a record.
CREATE TABLE admin_reads (
  id        bigserial   PRIMARY KEY,
  tenant_id text        NOT NULL,
  -- Who read (the administrator), and when.
  user_id   text        NOT NULL,
  read_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Which route, as its template.
  route     text        NOT NULL CHECK (route IN ('GET /v1/admin/runs', 'GET /v1/admin/runs/:id', 'GET /v1/admin/runs/:id/events')),
  -- The run the path names; null for the list.
  run_id    uuid        CHECK ((route = 'GET /v1/admin/runs') = (run_id IS NULL)),
  -- The request's query as the gateway understood it: the list's filters and page, or the events' page.
  query     jsonb       NOT NULL,
  -- The runs the answer showed (the list's page in order, or the one run): "who saw this run?"
  run_ids   uuid[]      NOT NULL,
  -- The request's W3C trace id: its logs and spans (the PDP's answer carries no decision id).
  trace_id  text        NOT NULL
);
CREATE INDEX admin_reads_by_tenant ON admin_reads (tenant_id, id DESC);

-- The tenant's runs of every user, newest first (GET /v1/admin/runs without a user filter).
CREATE INDEX runs_by_tenant ON runs (tenant_id, created_at DESC, id DESC);

DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_gateway') THEN
    GRANT SELECT, INSERT ON admin_reads TO steward_gateway;
    GRANT USAGE ON SEQUENCE admin_reads_id_seq TO steward_gateway;
  END IF;
END
$$;
