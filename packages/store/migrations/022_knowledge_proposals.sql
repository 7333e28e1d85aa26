-- Governed memory (docs/memory.md): the agent proposes a knowledge entry with the propose_knowledge
-- tool; a person applies it (it becomes a kb_documents row with its provenance) or dismisses it. A proposal is
-- queued (tool-exec) in the transaction of the tool call's idempotency record, and decided (gateway) in one
-- transaction that locks its row. The row is its own audit: its content never changes, and its one transition
-- (pending → applied | dismissed) records who decided and when; no service may delete it.
CREATE TABLE knowledge_proposals (
  id             uuid PRIMARY KEY,
  tenant_id      text        NOT NULL,
  run_id         uuid        NOT NULL,
  -- The run's thread; null for a run outside a thread.
  thread_id      uuid,
  step_no        integer     NOT NULL,
  -- The tool call's fingerprint: a retried call is answered from its record and never queues twice.
  fingerprint    text        NOT NULL,
  -- The run's creator, on whose behalf the agent proposed.
  proposed_by    text        NOT NULL,
  title          text        NOT NULL,
  content        text        NOT NULL,
  evidence_quote text,
  status         text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied', 'dismissed')),
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  decided_at     timestamptz,
  decided_by     text,
  document_id    uuid REFERENCES kb_documents (id) ON DELETE SET NULL,
  UNIQUE (run_id, fingerprint),
  CHECK ((status = 'pending') = (decided_at IS NULL))
);

-- A caller's proposals, newest first; the tenant's (admins); the limits (per run, pending per thread).
CREATE INDEX knowledge_proposals_by_proposer ON knowledge_proposals (tenant_id, proposed_by, created_at DESC, id DESC);
CREATE INDEX knowledge_proposals_by_tenant ON knowledge_proposals (tenant_id, created_at DESC, id DESC);
CREATE INDEX knowledge_proposals_by_run ON knowledge_proposals (run_id);
CREATE INDEX knowledge_proposals_pending_by_thread ON knowledge_proposals (thread_id) WHERE status = 'pending';

-- Provenance of a document made by applying a proposal (null for a document added otherwise).
ALTER TABLE kb_documents
  ADD COLUMN thread_id   uuid,
  ADD COLUMN run_id      uuid,
  ADD COLUMN step_no     integer,
  ADD COLUMN proposal_id uuid;

DO $$
BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_tool_exec') THEN
    -- The tool reads the run's thread, and queues (never decides) proposals.
    GRANT SELECT (thread_id) ON runs TO steward_tool_exec;
    GRANT SELECT, INSERT ON knowledge_proposals TO steward_tool_exec;
  END IF;
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'steward_gateway') THEN
    -- The gateway lists and decides them (applying adds the document); it never queues one.
    GRANT SELECT, UPDATE ON knowledge_proposals TO steward_gateway;
  END IF;
END
$$;
