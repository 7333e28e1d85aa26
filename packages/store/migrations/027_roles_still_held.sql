-- One definition of "the member still holds exactly the roles a decision was made on" (docs/policy.md, "Facts at
-- decision time"): the decision log's insert and the run's statement carrying the gateway's permit both ask it
-- where the decision's record is written. `remembered` is the roles as a JSON array, or NULL when the decision
-- read them itself (nothing to check). A member without a membership row holds no remembered roles.
CREATE FUNCTION roles_still_held(tenant text, member text, remembered jsonb) RETURNS boolean
  LANGUAGE sql STABLE AS $$
    SELECT remembered IS NULL OR remembered IS NOT DISTINCT FROM (
             SELECT to_jsonb(m.roles) FROM memberships m WHERE m.tenant_id = tenant AND m.user_id = member)
  $$;
