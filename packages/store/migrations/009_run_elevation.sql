-- The elevation session a run was created with (a reference; the session itself lives with the PDP).
ALTER TABLE runs ADD COLUMN elevation_session_id uuid;
