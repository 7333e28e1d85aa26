-- Since when a run has waited for the user (a question or a confirmation): the reaper ends it after the wait.
ALTER TABLE runs ADD COLUMN awaiting_since timestamptz;
CREATE INDEX runs_awaiting ON runs (awaiting_since) WHERE state IN ('awaiting_input', 'awaiting_confirmation');
