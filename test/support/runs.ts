import type { Pool } from "pg";
import { busNames } from "@steward/contract";
import type { NatsConnection } from "@steward/platform";
import { RELAYED_HEADER } from "@steward/store";
import { readSubject } from "./bus";
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

/** One message of a run on the bus, in the run's order: a copy of its event, or a command about it. */
export interface PublishedRow {
  /** The event type of a copy, or "command". */
  readonly type: string;
  /**
   * Put on the bus by its writer right after the commit, not by a relay: a copy without the relays' header; a
   * command written held (retry_at set, so no relay took it within its grace), never attempted, marked within it.
   */
  readonly byWriter: boolean;
}

/**
 * The run's messages in the run's order (each command after the events written before it), once every event is
 * on the bus and marked (`published_version`) and every command marked published.
 */
export async function publishedRows(pool: Pick<Pool, "query">, nc: NatsConnection, namespace: string, runId: string): Promise<PublishedRow[]> {
  const names = busNames(namespace);
  return waitFor(
    async () => {
      const { rows: run } = await pool.query<{ version: number; published_version: number }>("SELECT version, published_version FROM runs WHERE id = $1", [
        runId,
      ]);
      if (!run[0] || run[0].published_version < run[0].version) return undefined;
      const { rows: commands } = await pool.query<{ after_version: number; by_writer: boolean | null }>(
        `SELECT after_version, CASE WHEN published_at IS NOT NULL THEN retry_at IS NOT NULL AND attempts = 0 AND published_at < created_at + interval '2 seconds' END AS by_writer
           FROM outbox WHERE run_id = $1 AND after_version IS NOT NULL ORDER BY id`,
        [runId],
      );
      if (commands.some((c) => c.by_writer === null)) return undefined;
      const copies = await readSubject(nc, names.eventStream, names.runEvents(runId));
      if (copies.length < run[0].version) return undefined;
      const out: PublishedRow[] = [];
      let next = 0;
      const commandsUpTo = (version: number) => {
        while (next < commands.length && commands[next].after_version <= version) out.push({ type: "command", byWriter: commands[next++].by_writer! });
      };
      for (const copy of [...copies].sort((a, b) => a.json.metadata.seq - b.json.metadata.seq)) {
        commandsUpTo(copy.json.metadata.seq - 1);
        out.push({ type: copy.json.type, byWriter: copy.headers[RELAYED_HEADER] === undefined });
      }
      commandsUpTo(Number.MAX_SAFE_INTEGER);
      return out;
    },
    { what: "every event and command of the run on the bus and marked" },
  );
}
