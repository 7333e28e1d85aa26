-- Roles are facts at decision time: memberships change through the admin API (or are seeded once from a
-- token at first sight), and every change is recorded here with who made it, when and why.
CREATE TABLE membership_changes (
  id         bigserial   PRIMARY KEY,
  tenant_id  text        NOT NULL,
  user_id    text        NOT NULL,
  -- seeded: the roles of the user's first token in the tenant; granted / revoked: one role, by an administrator.
  change     text        NOT NULL CHECK (change IN ('seeded', 'granted', 'revoked')),
  role       text        CHECK ((change = 'seeded') = (role IS NULL)),
  -- The member's roles right after the change.
  roles      text[]      NOT NULL,
  changed_by text        NOT NULL,
  reason     text,
  changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX membership_changes_by_tenant ON membership_changes (tenant_id, id);

-- Least privilege (migration 014): where the per-service roles exist (`steward_<service>`), the gateway
-- administers memberships and reads their changes; the policy service reads memberships and seeds a user's
-- first one. Nobody updates or deletes a recorded change.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'steward_gateway') THEN
    GRANT SELECT, INSERT, UPDATE ON memberships TO steward_gateway;
    GRANT SELECT, INSERT ON membership_changes TO steward_gateway;
    GRANT USAGE ON SEQUENCE membership_changes_id_seq TO steward_gateway;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'steward_policy') THEN
    GRANT SELECT, INSERT ON memberships TO steward_policy;
    GRANT INSERT ON membership_changes TO steward_policy;
    GRANT USAGE ON SEQUENCE membership_changes_id_seq TO steward_policy;
  END IF;
END
$$;
