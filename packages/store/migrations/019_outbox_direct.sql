-- Writers on the latency path (a runner driving a run) publish the rows they wrote themselves, right after
-- their commit. Such rows are written with retry_at a short grace ahead and attempts 0 ("held"), so no relay
-- takes them meanwhile; a relay publishes any the writer did not (it died, or the bus refused) once the grace
-- has passed, and JetStream's duplicate window drops a row published twice.
--
-- A run's rows reach the bus in their order: every row of a run carries run_id, and a relay takes a row only
-- when no earlier row of the same run is still held.
ALTER TABLE outbox ADD COLUMN run_id uuid;
CREATE INDEX outbox_run_pending ON outbox (run_id, id) WHERE published_at IS NULL AND set_aside_at IS NULL AND run_id IS NOT NULL;

-- Only rows a relay must publish now wake the relays.
CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT FROM inserted WHERE retry_at IS NULL) THEN
    PERFORM pg_notify('steward_outbox', '');
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER outbox_inserted ON outbox;
CREATE TRIGGER outbox_inserted
  AFTER INSERT ON outbox
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
