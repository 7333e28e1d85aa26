-- Idempotency records: an idempotent tool's result, stored by run and fingerprint before it is returned.
CREATE TABLE tool_results (
  run_id      uuid        NOT NULL,
  fingerprint text        NOT NULL,
  tool_name   text        NOT NULL,
  result_code text        NOT NULL,
  result      jsonb       NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (run_id, fingerprint)
);
