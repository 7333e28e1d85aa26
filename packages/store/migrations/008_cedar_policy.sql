-- Cedar policy sets per tenant, versioned; elevation sessions; the durable decision log.
CREATE TABLE policy_sets (
  tenant_id    text        NOT NULL,
  version      integer     NOT NULL CHECK (version > 0),
  policies     text        NOT NULL,
  policy_ids   text[]      NOT NULL,
  status       text        NOT NULL CHECK (status IN ('draft', 'active', 'retired')),
  created_by   text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  activated_at timestamptz,
  PRIMARY KEY (tenant_id, version)
);
CREATE UNIQUE INDEX policy_sets_one_active ON policy_sets (tenant_id) WHERE status = 'active';

CREATE TABLE elevation_sessions (
  id         uuid PRIMARY KEY,
  tenant_id  text        NOT NULL,
  user_id    text        NOT NULL,
  actions    text[]      NOT NULL,
  granted_by text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);

CREATE TABLE policy_decisions (
  id                   bigserial PRIMARY KEY,
  decided_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  tenant_id            text        NOT NULL,
  user_id              text        NOT NULL,
  action               text        NOT NULL,
  resource_type        text        NOT NULL,
  resource_id          text        NOT NULL,
  run_id               uuid,
  step_no              integer,
  fingerprint          text,
  elevation_session_id uuid,
  permit               boolean     NOT NULL,
  code                 text        NOT NULL,
  policy_ids           text[]      NOT NULL,
  policy_version       integer,
  latency_ms           double precision NOT NULL
);
CREATE INDEX policy_decisions_by_run ON policy_decisions (tenant_id, run_id, id) WHERE run_id IS NOT NULL;
CREATE INDEX policy_decisions_by_tenant ON policy_decisions (tenant_id, id);

-- The first rule set (roles → actions) is replaced by Cedar policy sets.
DROP TABLE role_actions;
