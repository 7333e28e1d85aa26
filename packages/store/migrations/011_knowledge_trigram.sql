-- Trigram similarity as the knowledge search's second signal (misspelt words find their passage).
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX kb_chunks_trgm ON kb_chunks USING gin (content gin_trgm_ops);
