-- The data tools' reader (steward_reader) reads the datasets database, never this one: no login to the
-- application's database for anyone not granted it explicitly (superusers and the owner keep theirs), and no
-- temporary tables here. Per-service roles GRANT CONNECT for themselves. See docs/datasets.md.
DO $$
BEGIN
  EXECUTE format('REVOKE CONNECT, TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_reader') THEN
    EXECUTE format('REVOKE ALL ON DATABASE %I FROM steward_reader', current_database());
  END IF;
END $$;
