-- The demo dataset the data tools read: a small shop. Idempotent; run by `npm start` (infra/local/seed.mjs)
-- into the datasets database beside the application's (`steward` → `steward_datasets`), never into the
-- application's own. The data tools connect as steward_reader, a login role that may only read this
-- schema. See docs/datasets.md for every wall and why.
-- One loader of this database at a time: the script runs as one implicit transaction, so the lock is held to its
-- end. PostgreSQL scopes advisory locks to a database, so loaders of two databases on one server can still meet
-- on the cluster-wide role below; the transaction then fails whole and the loader runs it again
-- (test/support/databases.ts, where the suites load in parallel).
SELECT pg_advisory_xact_lock(hashtext('steward.dataset'));

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_reader') THEN
    CREATE ROLE steward_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION;
  END IF;
END $$;

-- The role bounds its own sessions, whatever a session sets: tool-exec may only lower statement_timeout.
ALTER ROLE steward_reader SET statement_timeout = '30s';
ALTER ROLE steward_reader SET idle_in_transaction_session_timeout = '10s';
ALTER ROLE steward_reader SET lock_timeout = '2s';
-- A query whose client went away (a cancelled call drops its connection) stops within a second.
ALTER ROLE steward_reader SET client_connection_check_interval = '1s';
ALTER ROLE steward_reader SET temp_file_limit = '64MB';

-- Database-wide doors, shut in the datasets database only: the application's database has its own grants
-- (packages/store/migrations/013_dataset_reader_isolation.sql keeps the reader out of it altogether).
DO $$
BEGIN
  IF to_regclass('public.events') IS NULL THEN
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    EXECUTE format('REVOKE TEMPORARY, CREATE ON DATABASE %I FROM steward_reader', current_database());
    REVOKE CREATE ON SCHEMA public FROM PUBLIC;
    REVOKE EXECUTE ON FUNCTION pg_catalog.pg_notify(text, text) FROM PUBLIC;
    -- Activity of other databases on the server (row counts written, sessions) is none of the reader's business.
    REVOKE SELECT ON pg_catalog.pg_stat_database, pg_catalog.pg_stat_activity FROM PUBLIC;
  END IF;
END $$;

CREATE SCHEMA IF NOT EXISTS demo_data;

CREATE TABLE IF NOT EXISTS demo_data.customers (
  id      integer PRIMARY KEY,
  name    text NOT NULL,
  country text NOT NULL,
  joined  date NOT NULL
);
CREATE TABLE IF NOT EXISTS demo_data.products (
  id       integer PRIMARY KEY,
  name     text NOT NULL,
  category text NOT NULL,
  price    numeric(10, 2) NOT NULL
);
CREATE TABLE IF NOT EXISTS demo_data.orders (
  id          integer PRIMARY KEY,
  customer_id integer NOT NULL REFERENCES demo_data.customers (id),
  product_id  integer NOT NULL REFERENCES demo_data.products (id),
  quantity    integer NOT NULL,
  ordered_at  date NOT NULL
);

INSERT INTO demo_data.customers VALUES
  (1, 'Ada Lovelace', 'UK', '2025-01-10'), (2, 'Grace Hopper', 'US', '2025-02-03'),
  (3, 'Alan Turing', 'UK', '2025-03-21'), (4, 'Katherine Johnson', 'US', '2025-04-12'),
  (5, 'Hedy Lamarr', 'AT', '2025-05-30'), (6, 'Linus Torvalds', 'FI', '2025-06-18')
ON CONFLICT DO NOTHING;
INSERT INTO demo_data.products VALUES
  (1, 'Mechanical keyboard', 'hardware', 129.00), (2, 'USB-C dock', 'hardware', 89.50),
  (3, 'Standing desk', 'furniture', 499.00), (4, 'Monitor arm', 'furniture', 79.90),
  (5, 'Noise-cancelling headphones', 'audio', 249.00)
ON CONFLICT DO NOTHING;
INSERT INTO demo_data.orders
SELECT g, 1 + (g * 7) % 6, 1 + (g * 3) % 5, 1 + g % 3, DATE '2026-01-01' + (g * 5)
  FROM generate_series(1, 60) AS g
ON CONFLICT DO NOTHING;

GRANT USAGE ON SCHEMA demo_data TO steward_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA demo_data TO steward_reader;
