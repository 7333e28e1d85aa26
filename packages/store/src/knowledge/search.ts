import type { Pool } from "pg";
import type { Evidence } from "@steward/contract";

/**
 * Full-text search over one tenant's chunks. The question's words are OR-ed (a question rarely has every
 * word in one passage) and ranked by cover density, so the passage holding most terms closest wins.
 */
export async function searchKnowledge(
  pool: Pool,
  tenantId: string,
  query: string,
  limit = 5,
): Promise<Evidence[]> {
  const words = query.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return [];
  const { rows } = await pool.query<Evidence>(
    `WITH q AS (SELECT websearch_to_tsquery('english', $2) AS q),
     ranked AS (
       SELECT c.document_id, c.content, ts_rank_cd(c.tsv, q.q) AS score,
              row_number() OVER (PARTITION BY c.document_id ORDER BY ts_rank_cd(c.tsv, q.q) DESC, c.ord) AS rn
         FROM kb_chunks c, q
        WHERE c.tenant_id = $1 AND c.tsv @@ q.q)
     SELECT r.document_id::text AS document_id, d.title,
            ts_headline('english', r.content, q.q, 'MaxWords=40, MinWords=15, StartSel="", StopSel=""') AS snippet,
            r.score::float8 AS score
       FROM ranked r JOIN kb_documents d ON d.id = r.document_id, q
      WHERE r.rn = 1
      ORDER BY r.score DESC, r.document_id
      LIMIT $3`,
    [tenantId, words.join(" or "), limit],
  );
  return rows;
}
