import type { Pool } from "pg";
import type { TestPlatform } from "./platform";
import { waitFor } from "./wait-for";

/** Creates a run as `token`'s user and waits (bounded) until it ends; returns the final snapshot. */
export async function runToEnd(platform: TestPlatform, token: string, input: string, timeoutMs = 30_000): Promise<any> {
  const created = await platform.http("POST", "/v1/agents/runs", { token, body: { input } });
  if (created.status !== 201) throw new Error(`POST answered ${created.status}: ${JSON.stringify(created.body)}`);
  return waitFor(
    async () => {
      const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token });
      return ["succeeded", "failed", "cancelled"].includes(r.body.state) ? r.body : undefined;
    },
    { timeoutMs, what: `run ${created.body.id} to end` },
  );
}

/** The run's events as the API lists them (all pages). */
export async function eventsOf(platform: TestPlatform, token: string, runId: string): Promise<Array<{ seq: number; type: string; data: any }>> {
  const all: Array<{ seq: number; type: string; data: any }> = [];
  let after = 0;
  for (;;) {
    const page = await platform.http("GET", `/v1/agents/runs/${runId}/events?after=${after}&limit=1000`, { token });
    all.push(...page.body.items);
    if (!page.body.has_more) return all;
    after = page.body.next_after;
  }
}

/** One outbox row of a run once it is marked published: who could have published it, and when. */
export interface PublishedRow {
  /** The event type of a copy, or "command". */
  readonly type: string;
  /** Written held for its writer (retry_at set), so no relay took it within its grace. */
  readonly held: boolean;
  /** Marked published within the 2 s grace of a held row. */
  readonly early: boolean;
  readonly attempts: number;
}

/**
 * The run's outbox rows in order, once every one is marked published. A row its writer published itself is held,
 * never attempted by a relay, and marked within the grace.
 */
export async function publishedOutboxRows(pool: Pick<Pool, "query">, runId: string): Promise<PublishedRow[]> {
  return waitFor(
    async () => {
      const { rows } = await pool.query<Omit<PublishedRow, "early"> & { early: boolean | null }>(
        `SELECT coalesce((payload::jsonb)->>'type', 'command') AS type, retry_at IS NOT NULL AS held, attempts,
                published_at < created_at + interval '2 seconds' AS early
           FROM outbox WHERE run_id = $1 ORDER BY id`,
        [runId],
      );
      return rows.every((r) => r.early !== null) ? (rows as PublishedRow[]) : undefined;
    },
    { what: "every outbox row of the run marked published" },
  );
}

/** Whether the row went out from its writer right after the commit, not from a relay. */
export const publishedByWriter = (row: PublishedRow): boolean => row.held && row.early && row.attempts === 0;
