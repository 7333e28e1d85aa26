-- The event store is the outbox of the events' bus copies (docs/architecture.md, "Outbox relay"). A copy is no
-- longer a second row: the run's row says how far its events are on the bus (published_version), and a relay
-- publishes a run's events above it, built from the events table. A run's versions are dense and written one
-- append at a time, so there is never a gap to wait for. The outbox keeps the commands (and the events set
-- aside), each command ordered after the run's version it was written with (after_version).
ALTER TABLE runs
  -- The subject prefix of the run's copies ('<namespace>.agent.events.<run>.'), written by every append.
  ADD COLUMN events_subject     text,
  -- Every event of the run up to this version is on the bus.
  ADD COLUMN published_version  integer NOT NULL DEFAULT 0,
  -- The writer publishes the events above published_version itself until then: no relay takes them.
  ADD COLUMN publish_held_until timestamptz,
  -- A relay's next try of the run's first unpublished event (NATS refused it, or no stream answered), and the
  -- refusals counted for it.
  ADD COLUMN publish_retry_at   timestamptz,
  ADD COLUMN publish_attempts   integer NOT NULL DEFAULT 0,
  -- Ended, and every event on the bus: the relays never need to look at the run again. Set once, by whoever
  -- marks the last event; an open run keeps it false, so that its appends and marks change no indexed column
  -- (PostgreSQL then updates the row in place, HOT, without touching the runs' indexes).
  ADD COLUMN bus_settled        boolean NOT NULL DEFAULT false;

ALTER TABLE outbox ADD COLUMN after_version integer;

-- Every run's events so far are on the bus, except those whose copies the outbox still holds (below).
UPDATE runs SET published_version = version, bus_settled = state IN ('succeeded', 'failed', 'cancelled');

-- What the outbox held of the old shape: a run's copies not yet published become its unpublished versions (the
-- relays publish them from the events table, with the same message id, so a copy already sent is dropped by
-- JetStream's duplicate window); a pending command waits for the pending copies written before it (the copies
-- before those were published first). Only pending rows are read, through the outbox_pending index.
UPDATE runs r
   SET published_version = p.first_pending - 1, events_subject = p.subject, bus_settled = false
  FROM (SELECT o.run_id, min((o.headers->>'Steward-Seq')::int) AS first_pending,
               min(left(o.subject, length(o.subject) - length(o.headers->>'Steward-Event-Type'))) AS subject
          FROM outbox o
         WHERE o.published_at IS NULL AND o.set_aside_at IS NULL AND o.run_id IS NOT NULL AND o.headers ? 'Steward-Seq'
         GROUP BY o.run_id) p
 WHERE p.run_id = r.id;

UPDATE outbox o
   SET after_version = coalesce((SELECT max((c.headers->>'Steward-Seq')::int) FROM outbox c
                                  WHERE c.run_id = o.run_id AND c.id < o.id AND c.headers ? 'Steward-Seq'
                                    AND c.published_at IS NULL AND c.set_aside_at IS NULL), 0)
 WHERE o.run_id IS NOT NULL AND NOT o.headers ? 'Steward-Seq' AND o.published_at IS NULL AND o.set_aside_at IS NULL;

DELETE FROM outbox WHERE headers ? 'Steward-Seq' AND published_at IS NULL AND set_aside_at IS NULL;

-- The runs that may have events not yet on the bus: the open ones and those ended moments ago. An index that
-- named version or published_version would make every append and every mark a non-HOT update of all the runs'
-- indexes (PostgreSQL counts the columns of an index's predicate as indexed).
CREATE INDEX runs_bus_unsettled ON runs (id) WHERE NOT bus_settled;

-- An append no writer publishes itself wakes the relays, as an outbox row for them does.
CREATE TRIGGER runs_events_appended
  AFTER INSERT ON runs
  FOR EACH ROW WHEN (NEW.version > NEW.published_version AND NEW.publish_held_until IS NULL)
  EXECUTE FUNCTION outbox_notify();
CREATE TRIGGER runs_events_appended_again
  AFTER UPDATE OF version ON runs
  FOR EACH ROW WHEN (NEW.version > OLD.version AND NEW.version > NEW.published_version AND NEW.publish_held_until IS NULL)
  EXECUTE FUNCTION outbox_notify();
