-- The append-only event store: one stream per run, optimistic concurrency on (stream_id, version).
CREATE TABLE events (
  global_position bigserial PRIMARY KEY,
  event_id        uuid        NOT NULL UNIQUE,
  stream_id       uuid        NOT NULL,
  tenant_id       text        NOT NULL,
  version         integer     NOT NULL CHECK (version > 0),
  type            text        NOT NULL,
  data            jsonb       NOT NULL,
  metadata        jsonb       NOT NULL DEFAULT '{}'::jsonb,
  recorded_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT events_stream_version UNIQUE (stream_id, version)
);

CREATE FUNCTION events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the event store is append-only';
END $$;

CREATE TRIGGER events_append_only
  BEFORE UPDATE OR DELETE OR TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_are_append_only();
