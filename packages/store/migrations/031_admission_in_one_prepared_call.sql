-- A new run's admission in one prepared call
-- (docs/performance.md, "Design decisions and the measurements behind them").
-- It was sent as one simple query (BEGIN; the tenant's lock; the admission; COMMIT) with its values as literals, so
-- PostgreSQL parsed and planned it again for every new run. Now `admit_run` takes the lock and then admits, the
-- function's statements each with a snapshot of their own (VOLATILE): the admission sees every admission committed
-- before the lock was granted, as before. The lock and the count of a tenant's runs in flight are one definition each,
-- for `admitDeferred` too.

-- Admissions of one tenant are decided one at a time: held until the transaction ends.
CREATE FUNCTION lock_tenant_admissions(tenant text) RETURNS void
  LANGUAGE sql AS $$ SELECT pg_advisory_xact_lock(hashtextextended('steward.admission.' || tenant, 0)) $$;

-- The tenant's admitted runs that are not finished and not waiting for a person.
CREATE FUNCTION tenant_runs_in_flight(tenant text) RETURNS int
  LANGUAGE sql STABLE AS $$
    SELECT count(*)::int FROM runs r WHERE r.tenant_id = tenant AND r.admitted_at IS NOT NULL AND r.state IN ('queued', 'running')
  $$;

-- Admits the queued run `run` and leases it to `owner` when its tenant has fewer than `max_running` runs in flight,
-- else marks it deferred. Rows: one per event of the admitted run (`admitted` true; one row of NULL events when it has
-- none), or one row with `admitted` false (deferred), or none (admitted meanwhile, ended, or leased to another).
CREATE FUNCTION admit_run(run uuid, tenant text, owner text, max_running int, lease_seconds float8)
  RETURNS TABLE (admitted boolean, event_id uuid, stream_id uuid, tenant_id text, version int, type text, data jsonb,
                 metadata jsonb, recorded_at timestamptz, global_position bigint)
  LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM lock_tenant_admissions(tenant);
  RETURN QUERY
  WITH target AS (
    SELECT r.id, r.lease_owner, r.lease_until FROM runs r
     WHERE r.id = run AND r.tenant_id = tenant AND r.state = 'queued' AND r.admitted_at IS NULL FOR UPDATE),
  flight AS (SELECT tenant_runs_in_flight(tenant) AS n),
  decided AS (
    UPDATE runs r
       SET admitted_at = CASE WHEN f.n < max_running THEN clock_timestamp() END,
           deferred_at = CASE WHEN f.n < max_running THEN NULL ELSE coalesce(r.deferred_at, clock_timestamp()) END,
           lease_owner = CASE WHEN f.n < max_running THEN owner ELSE r.lease_owner END,
           lease_until = CASE WHEN f.n < max_running THEN clock_timestamp() + make_interval(secs => lease_seconds) ELSE r.lease_until END
      FROM target t, flight f
     WHERE r.id = t.id AND (f.n >= max_running OR t.lease_owner IS NULL OR t.lease_owner = owner OR t.lease_until < clock_timestamp())
    RETURNING r.admitted_at IS NOT NULL AS ok)
  SELECT d.ok, e.event_id, e.stream_id, e.tenant_id, e.version, e.type, e.data, e.metadata, e.recorded_at, e.global_position
    FROM decided d LEFT JOIN events e ON d.ok AND e.stream_id = run
   ORDER BY e.version;
END $$;
