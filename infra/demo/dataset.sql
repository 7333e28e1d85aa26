-- The demo dataset the data tools read: a small shop. Idempotent; run by `npm start` and the test suite.
-- The data tools connect as steward_reader, a login role that may only read this schema.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_reader') THEN
    CREATE ROLE steward_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
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
