-- The tenants' knowledge bases: documents split into chunks, searched with full-text search.
CREATE TABLE kb_documents (
  id         uuid PRIMARY KEY,
  tenant_id  text        NOT NULL,
  title      text        NOT NULL,
  body       text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE kb_chunks (
  document_id uuid    NOT NULL REFERENCES kb_documents (id) ON DELETE CASCADE,
  ord         integer NOT NULL,
  tenant_id   text    NOT NULL,
  content     text    NOT NULL,
  tsv         tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
  PRIMARY KEY (document_id, ord)
);

CREATE INDEX kb_chunks_tsv ON kb_chunks USING gin (tsv);
CREATE INDEX kb_chunks_tenant ON kb_chunks (tenant_id);
