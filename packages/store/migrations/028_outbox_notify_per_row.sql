-- The relays' wake-up is decided per row, by the trigger's WHEN, which PostgreSQL evaluates without calling a
-- function: a row its writer publishes itself (held: retry_at set) costs nothing, where the statement trigger of
-- 019 ran a PL/pgSQL function and a query over the transition table on every insert into the outbox. A row for
-- the relays notifies; PostgreSQL delivers one notification per transaction however many rows sent the same one.
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('steward_outbox', '');
  RETURN NULL;
END $$;

DROP TRIGGER outbox_inserted ON outbox;
CREATE TRIGGER outbox_inserted
  AFTER INSERT ON outbox
  FOR EACH ROW WHEN (NEW.retry_at IS NULL)
  EXECUTE FUNCTION outbox_notify();
