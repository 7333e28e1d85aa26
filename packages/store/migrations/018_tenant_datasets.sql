-- Per-tenant datasets (docs/datasets.md). Where a dataset lives (its database, schema and
-- reader role) is tool-exec's configuration (DATASETS); these tables only say which tenant may use which named
-- dataset, and which dataset each run has in focus.

-- A tenant's grant of a named dataset: its members may focus it, all of them (no roles) or those holding one of
-- `roles` at the moment of the call.
CREATE TABLE tenant_datasets (
  tenant_id  text        NOT NULL,
  dataset    text        NOT NULL CHECK (dataset ~ '^[a-z][a-z0-9_]{0,62}$'),
  roles      text[]      NOT NULL DEFAULT '{}',
  granted_by text        NOT NULL,
  reason     text,
  granted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, dataset)
);

-- Every grant, change of roles and revocation, with who, when and why.
CREATE TABLE tenant_dataset_changes (
  id         bigserial   PRIMARY KEY,
  tenant_id  text        NOT NULL,
  dataset    text        NOT NULL,
  change     text        NOT NULL CHECK (change IN ('granted', 'revoked')),
  -- The roles of the grant after the change (empty: every member); for a revocation, those it had.
  roles      text[]      NOT NULL,
  changed_by text        NOT NULL,
  reason     text,
  changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX tenant_dataset_changes_by_tenant ON tenant_dataset_changes (tenant_id, id);

-- The dataset a run has in focus: set by focus_dataset (the latest focus of the run wins), read by the other
-- data tools, which act on this dataset only and check the tenant's grant again at every call. No foreign key
-- to runs: the runs projection may be rebuilt from the events, and a run's focus must survive that.
CREATE TABLE run_datasets (
  run_id     uuid        PRIMARY KEY,
  tenant_id  text        NOT NULL,
  dataset    text        NOT NULL,
  step_no    integer     NOT NULL,
  focused_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Least privilege (roles made by 014): the gateway administers grants; tool-exec reads them (and the members'
-- roles, for grants limited to roles) and keeps each run's focus.
DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_gateway') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_datasets TO steward_gateway;
    GRANT SELECT, INSERT ON tenant_dataset_changes TO steward_gateway;
    GRANT USAGE ON SEQUENCE tenant_dataset_changes_id_seq TO steward_gateway;
  END IF;
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_tool_exec') THEN
    GRANT SELECT ON tenant_datasets TO steward_tool_exec;
    GRANT SELECT (tenant_id, user_id, roles) ON memberships TO steward_tool_exec;
    GRANT SELECT, INSERT, UPDATE ON run_datasets TO steward_tool_exec;
  END IF;
END
$$;
