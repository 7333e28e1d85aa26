-- The gateway's route guard decides in process (packages/pdp, docs/architecture.md "Policy"): it reads the
-- tenants' active policy sets and writes its decisions to the same decision log, group-committed before it
-- answers, as the policy service does. It never writes a policy set (a tenant without one is asked of the policy
-- service, which installs the default set) and never reads the log back or an elevation session.
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_gateway') THEN
    GRANT SELECT ON policy_sets TO steward_gateway;
    GRANT INSERT ON policy_decisions TO steward_gateway;
    GRANT USAGE ON SEQUENCE policy_decisions_id_seq TO steward_gateway;
  END IF;
END
$$;
