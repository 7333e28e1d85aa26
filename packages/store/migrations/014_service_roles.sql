-- One PostgreSQL role per service, each granted what that service does and nothing more (SPEC §10;
-- docs/security.md). Migrations keep running as the owner of the tables; the services connect as their roles.
--
-- The roles are cluster-wide and made here without LOGIN when missing (an owner without CREATEROLE must create
-- them first: docs/operations.md). `npm start` gives each one LOGIN and a password; an operator does the same,
-- or grants a role to a login role of their own (GRANT steward_gateway TO ...). A later migration that adds a
-- table grants on it to the roles that need it.
--
--   steward_gateway       runs, events and the outbox (creating and controlling runs, SSE, the outbox relay),
--                         memberships, the knowledge base; no tool results, no policy tables
--   steward_agent_runner  runs, events and the outbox (driving runs, the reaper, the relay); nothing else
--   steward_tool_exec     the knowledge base, tool results, and of runs only who owns each (id, tenant, creator)
--   steward_policy        policy sets, elevation sessions, the decision log, memberships (read)
DO $$
DECLARE
  r text;
  can_create boolean;
BEGIN
  SELECT rolsuper OR rolcreaterole INTO can_create FROM pg_roles WHERE rolname = current_user;
  FOREACH r IN ARRAY ARRAY['steward_gateway', 'steward_agent_runner', 'steward_tool_exec', 'steward_policy'] LOOP
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) THEN
      IF NOT can_create THEN
        RAISE NOTICE 'role % does not exist and % may not create it: its grants are skipped', r, current_user;
        CONTINUE;
      END IF;
      BEGIN
        EXECUTE format('CREATE ROLE %I NOLOGIN', r);
      EXCEPTION WHEN duplicate_object OR unique_violation THEN
        NULL; -- made meanwhile by a migration of another database on this cluster
      END;
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), r);
    EXECUTE format('GRANT USAGE ON SCHEMA public TO %I', r);
  END LOOP;

  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_gateway') THEN
    GRANT SELECT, INSERT, UPDATE ON runs TO steward_gateway;
    GRANT SELECT, INSERT ON events TO steward_gateway;
    GRANT SELECT, INSERT, UPDATE, DELETE ON outbox TO steward_gateway;
    GRANT SELECT, INSERT, UPDATE ON memberships TO steward_gateway;
    GRANT SELECT, INSERT, DELETE ON kb_documents TO steward_gateway;
    GRANT SELECT, INSERT ON kb_chunks TO steward_gateway;
    GRANT USAGE ON SEQUENCE events_global_position_seq, outbox_id_seq TO steward_gateway;
  END IF;

  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_agent_runner') THEN
    GRANT SELECT, INSERT, UPDATE ON runs TO steward_agent_runner;
    GRANT SELECT, INSERT ON events TO steward_agent_runner;
    GRANT SELECT, INSERT, UPDATE, DELETE ON outbox TO steward_agent_runner;
    GRANT USAGE ON SEQUENCE events_global_position_seq, outbox_id_seq TO steward_agent_runner;
  END IF;

  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_tool_exec') THEN
    GRANT SELECT (id, tenant_id, created_by) ON runs TO steward_tool_exec;
    GRANT SELECT, INSERT ON kb_documents, kb_chunks TO steward_tool_exec;
    GRANT SELECT, INSERT ON tool_results TO steward_tool_exec;
  END IF;

  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_policy') THEN
    GRANT SELECT ON memberships TO steward_policy;
    GRANT SELECT, INSERT, UPDATE ON policy_sets TO steward_policy;
    GRANT SELECT, INSERT, UPDATE ON elevation_sessions TO steward_policy;
    GRANT SELECT, INSERT ON policy_decisions TO steward_policy;
    GRANT USAGE ON SEQUENCE policy_decisions_id_seq TO steward_policy;
  END IF;
END
$$;
