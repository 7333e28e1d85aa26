-- The transactional outbox: rows written with the events, published to JetStream by the relay.
CREATE TABLE outbox (
  id           bigserial PRIMARY KEY,
  subject      text        NOT NULL,
  msg_id       text        NOT NULL UNIQUE,
  payload      text        NOT NULL,
  headers      jsonb       NOT NULL DEFAULT '{}'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  published_at timestamptz
);

CREATE INDEX outbox_pending ON outbox (id) WHERE published_at IS NULL;

CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('steward_outbox', '');
  RETURN NULL;
END $$;

CREATE TRIGGER outbox_inserted
  AFTER INSERT ON outbox
  FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
