-- Forking a thread (docs/threads.md, "Fork"): the fold's new fields in the threads projection. A fork
-- inherits its source's runs up to and including one of them; those runs are ended and immutable, so the fork
-- names them (in order) instead of copying their events. The runner reads the list to show a fork's run the
-- inherited turns; GET /v1/threads/:id lists them first.
ALTER TABLE threads
  ADD COLUMN forked_from_thread_id uuid,
  ADD COLUMN forked_from_run_id    uuid,
  ADD COLUMN inherited_run_ids     uuid[] NOT NULL DEFAULT '{}',
  ADD CONSTRAINT threads_fork_origin CHECK (
    (forked_from_thread_id IS NULL AND forked_from_run_id IS NULL AND cardinality(inherited_run_ids) = 0)
    OR (forked_from_thread_id IS NOT NULL AND forked_from_run_id IS NOT NULL AND cardinality(inherited_run_ids) > 0));
