import type { Pool } from "pg";
import type { Evidence } from "@steward/contract";

/**
 * Searches one tenant's chunks, one best chunk per document. Full-text search first: the question's words
 * are OR-ed (a question rarely has every word in one passage) and ranked by cover density, so the passage
 * holding most terms closest wins; trigram word similarity breaks ties. When the words match nothing
 * (a misspelling), trigram similarity of each word finds the passage on its own.
 */
export async function searchKnowledge(pool: Pool, tenantId: string, query: string, limit = 5): Promise<Evidence[]> {
  const words = query.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return [];
  const ranked = await fullText(pool, tenantId, words, limit);
  if (ranked.length > 0) return ranked;
  return bySimilarity(
    pool,
    tenantId,
    words.filter((w) => w.length >= 4),
    limit,
  );
}

async function fullText(pool: Pool, tenantId: string, words: string[], limit: number): Promise<Evidence[]> {
  const { rows } = await pool.query<Evidence>(
    `WITH q AS (SELECT websearch_to_tsquery('english', $2) AS q),
     ranked AS (
       SELECT c.document_id, c.content, ts_rank_cd(c.tsv, q.q) + 0.1 * word_similarity($3, c.content) AS score,
              row_number() OVER (PARTITION BY c.document_id ORDER BY ts_rank_cd(c.tsv, q.q) DESC, c.ord) AS rn
         FROM kb_chunks c, q
        WHERE c.tenant_id = $1 AND c.tsv @@ q.q)
     SELECT r.document_id::text AS document_id, d.title,
            ts_headline('english', r.content, q.q, 'MaxWords=40, MinWords=15, StartSel="", StopSel=""') AS snippet,
            r.score::float8 AS score
       FROM ranked r JOIN kb_documents d ON d.id = r.document_id, q
      WHERE r.rn = 1
      ORDER BY r.score DESC, r.document_id
      LIMIT $4`,
    [tenantId, words.join(" or "), words.join(" "), limit],
  );
  return rows;
}

async function bySimilarity(pool: Pool, tenantId: string, words: string[], limit: number): Promise<Evidence[]> {
  if (words.length === 0) return [];
  const { rows } = await pool.query<Evidence>(
    `WITH scored AS (
       SELECT c.document_id, c.ord, c.content,
              (SELECT avg(word_similarity(w, c.content)) FROM unnest($2::text[]) AS w) AS score
         FROM kb_chunks c
        WHERE c.tenant_id = $1 AND EXISTS (SELECT 1 FROM unnest($2::text[]) AS w WHERE w <% c.content)),
     ranked AS (SELECT *, row_number() OVER (PARTITION BY document_id ORDER BY score DESC, ord) AS rn FROM scored)
     SELECT r.document_id::text AS document_id, d.title, left(r.content, 240) AS snippet, r.score::float8 AS score
       FROM ranked r JOIN kb_documents d ON d.id = r.document_id
      WHERE r.rn = 1
      ORDER BY r.score DESC, r.document_id
      LIMIT $3`,
    [tenantId, words, limit],
  );
  return rows;
}
