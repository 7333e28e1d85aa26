-- A tenant's documents by recency: the console's and the API's list order, and the count that bounds how many
-- documents a tenant's knowledge base holds (insertDocument), read without a scan of every tenant's documents.
CREATE INDEX IF NOT EXISTS kb_documents_tenant ON kb_documents (tenant_id, created_at DESC, id DESC);
