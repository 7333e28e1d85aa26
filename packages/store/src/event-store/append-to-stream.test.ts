import { randomUUID } from "node:crypto";
import type { RunEvent } from "@steward/contract";
import { ConcurrencyError, createPool, inTransaction, type Pool } from "@steward/platform";
import { appendToStream, type AppendOptions } from "./append-to-stream";
import { readStream } from "./read-stream";
import { readAll } from "./read-all";
import { freshDatabase } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";

/** A few schema-valid events; `n` thoughts after nothing in particular (the store does not fold). */
function thoughts(n: number, from = 1): RunEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    type: "thought",
    data: {
      step_no: from + i,
      text: `step ${from + i}`,
      tool_calls: [],
      usage: { input_tokens: 1, output_tokens: 1 },
      provider: "scripted",
    },
  }));
}

describe("appendToStream (PostgreSQL event store)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;

  const append = (options: Omit<AppendOptions, "tenantId"> & { tenantId?: string }) =>
    inTransaction(pool, (client) => appendToStream(client, { tenantId: "acme", ...options }));

  const countRows = async (streamId?: string): Promise<number> => {
    const { rows } = streamId
      ? await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE stream_id = $1", [streamId])
      : await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events");
    return rows[0].n;
  };

  beforeAll(async () => {
    db = await freshDatabase("steward_store_es");
    pool = createPool(db.url, { max: 10 });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  it("appends to a new stream with expected version 0 and numbers the events 1..n", async () => {
    const streamId = randomUUID();
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const stored = await append({ streamId, expectedVersion: 0, events: thoughts(3), traceparent });

    expect(stored.map((e) => e.metadata.seq)).toEqual([1, 2, 3]);
    expect(stored.map((e) => (e.data as { step_no: number }).step_no)).toEqual([1, 2, 3]);
    for (const e of stored) {
      expect(e.metadata.run_id).toBe(streamId);
      expect(e.metadata.tenant_id).toBe("acme");
      expect(e.metadata.event_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(e.metadata.recorded_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
      expect(e.metadata.traceparent).toBe(traceparent);
    }
    expect(new Set(stored.map((e) => e.metadata.event_id)).size).toBe(3);

    const { rows } = await pool.query<{ version: number; type: string; tenant_id: string }>(
      "SELECT version, type, tenant_id FROM events WHERE stream_id = $1 ORDER BY version",
      [streamId],
    );
    expect(rows).toEqual([
      { version: 1, type: "thought", tenant_id: "acme" },
      { version: 2, type: "thought", tenant_id: "acme" },
      { version: 3, type: "thought", tenant_id: "acme" },
    ]);

    // A second append at the current version continues the numbering.
    const more = await append({ streamId, expectedVersion: 3, events: thoughts(2, 4) });
    expect(more.map((e) => e.metadata.seq)).toEqual([4, 5]);
    expect(await countRows(streamId)).toBe(5);
  });

  it("refuses a stale expected version (0 again) with ConcurrencyError and writes nothing", async () => {
    const streamId = randomUUID();
    await append({ streamId, expectedVersion: 0, events: thoughts(1) });
    const before = await countRows();

    const attempt = append({ streamId, expectedVersion: 0, events: thoughts(2) });
    await expect(attempt).rejects.toBeInstanceOf(ConcurrencyError);
    await attempt.catch((err: ConcurrencyError) => {
      expect(err.streamId).toBe(streamId);
      expect(err.expectedVersion).toBe(0);
    });

    expect(await countRows()).toBe(before);
    expect(await countRows(streamId)).toBe(1);
  });

  it("refuses expected version 1 when the stream is at 2, and writes nothing", async () => {
    const streamId = randomUUID();
    await append({ streamId, expectedVersion: 0, events: thoughts(2) });
    const before = await countRows();

    await expect(append({ streamId, expectedVersion: 1, events: thoughts(1, 2) })).rejects.toBeInstanceOf(ConcurrencyError);

    expect(await countRows()).toBe(before);
    const events = await readStream(pool, streamId);
    expect(events.map((e) => e.metadata.seq)).toEqual([1, 2]);
  });

  it("refuses an expected version higher than the stream's, and writes nothing", async () => {
    const streamId = randomUUID();
    await append({ streamId, expectedVersion: 0, events: thoughts(2) });
    const before = await countRows();

    await expect(append({ streamId, expectedVersion: 5, events: thoughts(1, 6) })).rejects.toBeInstanceOf(ConcurrencyError);
    // A stream that does not exist yet is at version 0, not at 1.
    const fresh = randomUUID();
    await expect(append({ streamId: fresh, expectedVersion: 1, events: thoughts(1) })).rejects.toBeInstanceOf(ConcurrencyError);

    expect(await countRows()).toBe(before);
    expect(await countRows(fresh)).toBe(0);
  });

  it("lets exactly one of two concurrent appends at the same expected version succeed", async () => {
    for (let round = 0; round < 5; round++) {
      const streamId = randomUUID();
      await append({ streamId, expectedVersion: 0, events: thoughts(1) });
      const results = await Promise.allSettled([
        append({ streamId, expectedVersion: 1, events: thoughts(2, 2) }),
        append({ streamId, expectedVersion: 1, events: thoughts(3, 2) }),
      ]);
      const ok = results.filter((r) => r.status === "fulfilled");
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(ok).toHaveLength(1);
      expect(failed).toHaveLength(1);
      expect(failed[0].reason).toBeInstanceOf(ConcurrencyError);
      const written = (ok[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof append>>>).value.length;
      expect(await countRows(streamId)).toBe(1 + written);
      const versions = (await readStream(pool, streamId)).map((e) => e.metadata.seq);
      expect(versions).toEqual(Array.from({ length: 1 + written }, (_, i) => i + 1));
    }
  });

  it("refuses the second appender when both passed the version check (the unique constraint catches it)", async () => {
    const streamId = randomUUID();
    let second: Promise<unknown> | undefined;
    // The first transaction appends and stays open until the second appender is blocked on its uncommitted row.
    await inTransaction(pool, async (client) => {
      await appendToStream(client, { streamId, tenantId: "acme", expectedVersion: 0, events: thoughts(2) });
      second = append({ streamId, expectedVersion: 0, events: thoughts(1) });
      second.catch(() => undefined);
      await waitFor(
        async () => {
          const { rows } = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO events%'`,
          );
          return rows[0].n > 0 ? true : undefined;
        },
        { timeoutMs: 10_000, what: "the second appender to wait on the first one's row" },
      );
    });
    const err = await second!.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConcurrencyError);
    expect((err as Error & { cause?: { code?: string } }).cause?.code).toBe("23505");
    expect(await countRows(streamId)).toBe(2);
  });

  it("reads a stream in order, from after a version, with a limit", async () => {
    const streamId = randomUUID();
    const other = randomUUID();
    await append({ streamId, expectedVersion: 0, events: thoughts(3) });
    await append({ streamId: other, expectedVersion: 0, events: thoughts(2, 100) });
    await append({ streamId, expectedVersion: 3, events: thoughts(2, 4) });

    const all = await readStream(pool, streamId);
    expect(all.map((e) => e.metadata.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(all.map((e) => (e.data as { step_no: number }).step_no)).toEqual([1, 2, 3, 4, 5]);
    expect(all.every((e) => e.metadata.run_id === streamId && e.type === "thought")).toBe(true);

    const after2 = await readStream(pool, streamId, { after: 2 });
    expect(after2.map((e) => e.metadata.seq)).toEqual([3, 4, 5]);
    const page = await readStream(pool, streamId, { after: 1, limit: 2 });
    expect(page.map((e) => e.metadata.seq)).toEqual([2, 3]);
    expect(await readStream(pool, streamId, { after: 5 })).toEqual([]);
    expect(await readStream(pool, randomUUID())).toEqual([]);
  });

  it("reads every stream by global position", async () => {
    const { rows } = await pool.query<{ p: number }>("SELECT coalesce(max(global_position), 0)::int AS p FROM events");
    const start = rows[0].p;
    const a = randomUUID();
    const b = randomUUID();
    await append({ streamId: a, expectedVersion: 0, events: thoughts(2) });
    await append({ streamId: b, expectedVersion: 0, events: thoughts(1, 10) });
    await append({ streamId: a, expectedVersion: 2, events: thoughts(1, 3) });

    const positioned = await readAll(pool, { after: start });
    expect(positioned.map((p) => [p.event.metadata.run_id, p.event.metadata.seq])).toEqual([
      [a, 1],
      [a, 2],
      [b, 1],
      [a, 3],
    ]);
    const positions = positioned.map((p) => p.position);
    expect(positions.every((p) => typeof p === "number" && p > start)).toBe(true);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
    expect(new Set(positions).size).toBe(positions.length);

    const tail = await readAll(pool, { after: positions[1], limit: 1 });
    expect(tail).toHaveLength(1);
    expect(tail[0].position).toBe(positions[2]);
    expect(tail[0].event.metadata.run_id).toBe(b);
  });

  it("refuses UPDATE, DELETE and TRUNCATE on events (append-only trigger)", async () => {
    const streamId = randomUUID();
    await append({ streamId, expectedVersion: 0, events: thoughts(2) });
    const before = await countRows();

    await expect(pool.query("UPDATE events SET type = 'tampered' WHERE stream_id = $1", [streamId])).rejects.toThrow(
      /append-only/,
    );
    await expect(pool.query("DELETE FROM events WHERE stream_id = $1", [streamId])).rejects.toThrow(/append-only/);
    await expect(pool.query("TRUNCATE events")).rejects.toThrow(/append-only/);

    expect(await countRows()).toBe(before);
    const { rows } = await pool.query<{ type: string }>("SELECT type FROM events WHERE stream_id = $1", [streamId]);
    expect(rows.map((r) => r.type)).toEqual(["thought", "thought"]);
  });
});
