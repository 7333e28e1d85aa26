-- Facts the policy decision point reads at decision time.
CREATE TABLE memberships (
  tenant_id  text        NOT NULL,
  user_id    text        NOT NULL,
  roles      text[]      NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, user_id)
);

-- Which roles may take which actions. tenant_id '*' rows apply to every tenant; action '*' is every action.
CREATE TABLE role_actions (
  tenant_id text NOT NULL,
  role      text NOT NULL,
  action    text NOT NULL,
  PRIMARY KEY (tenant_id, role, action)
);

INSERT INTO role_actions (tenant_id, role, action) VALUES
  ('*', 'member', 'agent.run.create'),
  ('*', 'member', 'agent.run.read'),
  ('*', 'member', 'agent.run.control'),
  ('*', 'member', 'knowledge.document.read'),
  ('*', 'admin',  '*');
