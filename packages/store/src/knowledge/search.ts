import type { Pool } from "pg";
import type { Evidence } from "@steward/contract";

/**
 * Searches one tenant's chunks. Full-text search first: the question's words are OR-ed (a question rarely
 * has every word in one passage) and ranked by cover density, so the passage holding most terms closest
 * wins. Trigram word similarity is the second signal: it breaks ties and, when the words match nothing
 * (a misspelling), finds the passage on its own. One best chunk per document.
 */
export async function searchKnowledge(pool: Pool, tenantId: string, query: string, limit = 5): Promise<Evidence[]> {
  const words = query.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return [];
  const text = words.join(" ");
  const { rows } = await pool.query<Evidence>(
    `WITH q AS (SELECT websearch_to_tsquery('english', $2) AS q),
     scored AS (
       SELECT c.document_id, c.ord, c.content,
              ts_rank_cd(c.tsv, q.q) AS fts,
              word_similarity($3, c.content) AS trgm,
              c.tsv @@ q.q AS hit
         FROM kb_chunks c, q
        WHERE c.tenant_id = $1 AND (c.tsv @@ q.q OR $3 <% c.content)),
     ranked AS (
       SELECT *, fts + 0.1 * trgm AS score,
              row_number() OVER (PARTITION BY document_id ORDER BY fts + 0.1 * trgm DESC, ord) AS rn
         FROM scored)
     SELECT r.document_id::text AS document_id, d.title,
            CASE WHEN r.hit
                 THEN ts_headline('english', r.content, q.q, 'MaxWords=40, MinWords=15, StartSel="", StopSel=""')
                 ELSE left(r.content, 240) END AS snippet,
            r.score::float8 AS score
       FROM ranked r JOIN kb_documents d ON d.id = r.document_id, q
      WHERE r.rn = 1
      ORDER BY r.score DESC, r.document_id
      LIMIT $4`,
    [tenantId, words.join(" or "), text, limit],
  );
  return rows;
}
