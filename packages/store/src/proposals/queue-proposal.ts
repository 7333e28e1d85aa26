import { timeOrderedId } from "@steward/platform";
import { PROPOSAL_COLUMNS, type KnowledgeProposal, type ProposalLimits, type SqlQuery } from "./proposal";

export interface QueueProposalInput {
  readonly tenantId: string;
  readonly runId: string;
  readonly stepNo: number;
  /** The tool call's fingerprint (one proposal per call, whatever is retried). */
  readonly fingerprint: string;
  /** The run's creator. */
  readonly proposedBy: string;
  readonly title: string;
  readonly content: string;
  readonly evidenceQuote: string | null;
}

/**
 * Queued, or refused by a limit: `run` (proposals of this run), `thread` (pending ones of its thread) or `member`
 * (pending ones of the run's creator outside threads, for a run in none).
 */
export type QueueProposalOutcome =
  | { readonly kind: "queued"; readonly proposal: KnowledgeProposal }
  | { readonly kind: "limit"; readonly limit: "run" | "thread" | "member"; readonly max: number }
  | { readonly kind: "no_run" };

/**
 * Queues a pending proposal of a run, inside the caller's transaction (the tool call's record: it commits
 * with it). Race-free: a transaction-scoped advisory lock on the run's thread (on its creator's proposals outside
 * threads when it has none) serialises the proposals that count against the same limits, so each sees the others'
 * commits before it counts. Of two concurrent proposals at the limit, the second waits, counts the first, and is
 * refused.
 */
export async function queueProposal(tx: SqlQuery, input: QueueProposalInput, limits: ProposalLimits): Promise<QueueProposalOutcome> {
  const run = (await tx.query("SELECT thread_id::text AS thread_id FROM runs WHERE id = $1 AND tenant_id = $2", [input.runId, input.tenantId])).rows[0] as
    { thread_id: string | null } | undefined;
  if (!run) return { kind: "no_run" };
  const scope = run.thread_id ?? JSON.stringify([input.tenantId, input.proposedBy]);
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`knowledge-proposals/${scope}`]);
  const counts = (
    await tx.query(
      `SELECT (SELECT count(*)::int FROM knowledge_proposals WHERE run_id = $1) AS of_run,
              (SELECT count(*)::int FROM knowledge_proposals WHERE thread_id = $2 AND status = 'pending') AS pending_of_thread,
              (SELECT count(*)::int FROM knowledge_proposals
                WHERE $2::uuid IS NULL AND tenant_id = $3 AND proposed_by = $4 AND thread_id IS NULL AND status = 'pending') AS pending_of_member`,
      [input.runId, run.thread_id, input.tenantId, input.proposedBy],
    )
  ).rows[0] as { of_run: number; pending_of_thread: number; pending_of_member: number };
  if (counts.of_run >= limits.perRun) return { kind: "limit", limit: "run", max: limits.perRun };
  if (run.thread_id && counts.pending_of_thread >= limits.pendingPerThread) return { kind: "limit", limit: "thread", max: limits.pendingPerThread };
  if (!run.thread_id && counts.pending_of_member >= limits.pendingPerMemberOutsideThreads) {
    return { kind: "limit", limit: "member", max: limits.pendingPerMemberOutsideThreads };
  }
  const { rows } = await tx.query(
    `INSERT INTO knowledge_proposals (id, tenant_id, run_id, thread_id, step_no, fingerprint, proposed_by, title, content, evidence_quote)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     RETURNING ${PROPOSAL_COLUMNS}`,
    [
      timeOrderedId(),
      input.tenantId,
      input.runId,
      run.thread_id,
      input.stepNo,
      input.fingerprint,
      input.proposedBy,
      input.title,
      input.content,
      input.evidenceQuote,
    ],
  );
  return { kind: "queued", proposal: rows[0] as KnowledgeProposal };
}
