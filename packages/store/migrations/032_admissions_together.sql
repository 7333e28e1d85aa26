-- A tenant's new runs admitted together
-- (docs/performance.md, "Design decisions and the measurements behind them").
-- `admit_run` decides one run per call, each holding the tenant's lock across its own commit, so a burst of one
-- tenant's runs started one commit after another. `admit_runs` takes the lock once for the runs one runner has in hand
-- for that tenant, and decides them as `admit_run` would have decided them one after the other, in the order given:
-- while places remain, a run whose lease is free (or the caller's, or expired) is admitted and leased to the caller,
-- and one leased to another runner is left unchanged; once the places are taken, the rest are deferred. `admit_run`
-- stays for runners not yet upgraded, and now decides through `admit_runs` (below): the rule has one definition.

-- Rows: per admitted run, one per event (one row of NULL events when it has none); per deferred run, one row with
-- `admitted` false; none for a run admitted meanwhile, ended, leased to another, or not the tenant's.
CREATE FUNCTION admit_runs(asked_runs uuid[], tenant text, owner text, max_running int, lease_seconds float8)
  RETURNS TABLE (run_id uuid, admitted boolean, event_id uuid, stream_id uuid, tenant_id text, version int, type text,
                 data jsonb, metadata jsonb, recorded_at timestamptz, global_position bigint)
  LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM lock_tenant_admissions(tenant);
  RETURN QUERY
  WITH asked AS (
    SELECT a.id, min(a.ord) AS ord FROM unnest(asked_runs) WITH ORDINALITY AS a(id, ord) GROUP BY a.id),
  -- Locked in id order, as the marks and the runner's appends lock runs rows: none waits for another in a cycle.
  target AS (
    SELECT r.id, (r.lease_owner IS NULL OR r.lease_owner = owner OR r.lease_until < clock_timestamp()) AS free
      FROM runs r
     WHERE r.id = ANY(asked_runs) AND r.tenant_id = tenant AND r.state = 'queued' AND r.admitted_at IS NULL
     ORDER BY r.id FOR UPDATE),
  -- Counted once (not again for each run it is compared with).
  places AS MATERIALIZED (SELECT max_running - tenant_runs_in_flight(tenant) AS n),
  -- Each run with the places the free runs before it (in the order asked) have taken.
  ranked AS (
    SELECT t.id, t.free,
           coalesce(sum(t.free::int) OVER (ORDER BY a.ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS taken
      FROM target t JOIN asked a USING (id)),
  verdicts AS (
    SELECT k.id, k.free AND k.taken < p.n AS admit, k.taken >= p.n AS postpone FROM ranked k, places p),
  decided AS (
    UPDATE runs r
       SET admitted_at = CASE WHEN v.admit THEN clock_timestamp() END,
           deferred_at = CASE WHEN v.admit THEN NULL ELSE coalesce(r.deferred_at, clock_timestamp()) END,
           lease_owner = CASE WHEN v.admit THEN owner ELSE r.lease_owner END,
           lease_until = CASE WHEN v.admit THEN clock_timestamp() + make_interval(secs => lease_seconds) ELSE r.lease_until END
      FROM verdicts v
     WHERE r.id = v.id AND (v.admit OR v.postpone)
    RETURNING r.id, v.admit AS ok)
  SELECT d.id, d.ok, e.event_id, e.stream_id, e.tenant_id, e.version, e.type, e.data, e.metadata, e.recorded_at, e.global_position
    FROM decided d LEFT JOIN events e ON d.ok AND e.stream_id = d.id
   ORDER BY d.id, e.version;
END $$;

-- One run's admission, as before (same rows, without the run's id): `admit_runs` for that run alone.
CREATE OR REPLACE FUNCTION admit_run(run uuid, tenant text, owner text, max_running int, lease_seconds float8)
  RETURNS TABLE (admitted boolean, event_id uuid, stream_id uuid, tenant_id text, version int, type text, data jsonb,
                 metadata jsonb, recorded_at timestamptz, global_position bigint)
  LANGUAGE sql VOLATILE AS $$
    SELECT a.admitted, a.event_id, a.stream_id, a.tenant_id, a.version, a.type, a.data, a.metadata, a.recorded_at, a.global_position
      FROM admit_runs(ARRAY[run], tenant, owner, max_running, lease_seconds) a
  $$;
