-- Two SQL functions called on hot paths, now PL/pgSQL
-- (docs/performance.md, "Design decisions and the measurements behind them"). A SQL function whose body
-- reads a table is not inlined into the statement that calls it, and PostgreSQL 15 parses and plans its body again in
-- every such statement; PL/pgSQL keeps the plan for the connection (measured there). The definitions do not change,
-- and neither does what they see: a STABLE function of either language reads with the snapshot of the statement
-- that calls it.

-- The tenant's admitted runs that are not finished and not waiting for a person (each admission counts them).
CREATE OR REPLACE FUNCTION tenant_runs_in_flight(tenant text) RETURNS int
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (SELECT count(*)::int FROM runs r WHERE r.tenant_id = tenant AND r.admitted_at IS NOT NULL AND r.state IN ('queued', 'running'));
END $$;

-- Whether the member still holds exactly the roles a decision was made on (each permit's record and each new run's
-- statement carrying one ask it; see 027).
CREATE OR REPLACE FUNCTION roles_still_held(tenant text, member text, remembered jsonb) RETURNS boolean
  LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN remembered IS NULL OR remembered IS NOT DISTINCT FROM (
           SELECT to_jsonb(m.roles) FROM memberships m WHERE m.tenant_id = tenant AND m.user_id = member);
END $$;
