import { randomUUID } from "node:crypto";
import { addSeconds, initialRunState, nowMicros, type RunEvent, type RunState } from "@steward/contract";
import { appendRunEvents } from "../runs/append-run-events";
import { readStream } from "./read-stream";
import { readAll } from "./read-all";
import { useFreshDatabase } from "../../../../test/support/databases";

function queued(): RunEvent {
  const createdAt = nowMicros();
  return {
    type: "run.queued",
    data: {
      input: "hello",
      mode: "agent",
      response_language: null,
      created_by: "u1",
      created_at: createdAt,
      deadline_at: addSeconds(createdAt, 180),
      thread_id: null,
    },
  };
}

/** `n` thoughts numbered from `from`. */
function thoughts(n: number, from = 1): RunEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    type: "thought",
    data: { step_no: from + i, text: `step ${from + i}`, tool_calls: [], usage: { input_tokens: 1, output_tokens: 1 }, provider: "scripted" },
  }));
}

describe("reading the event store (PostgreSQL)", () => {
  const db = useFreshDatabase("steward_store_read");
  const states = new Map<string, RunState>();

  /** Appends to a run through the one write path, starting it with run.queued when new. */
  async function append(runId: string, events: RunEvent[]): Promise<void> {
    const state = states.get(runId);
    const result = await appendRunEvents(db.pool, {
      runId,
      tenantId: "acme",
      namespace: "rs",
      state: state ?? initialRunState,
      events: state ? events : [queued(), ...events],
    });
    states.set(runId, result.state);
  }

  it("reads a stream in order, from after a version, with a limit", async () => {
    const streamId = randomUUID();
    const other = randomUUID();
    await append(streamId, thoughts(2));
    await append(other, thoughts(2, 100));
    await append(streamId, thoughts(2, 3));

    const all = await readStream(db.pool, streamId);
    expect(all.map((e) => e.metadata.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(all.map((e) => e.type)).toEqual(["run.queued", "thought", "thought", "thought", "thought"]);
    expect(all.slice(1).map((e) => (e.data as { step_no: number }).step_no)).toEqual([1, 2, 3, 4]);
    expect(all.every((e) => e.metadata.run_id === streamId && e.metadata.tenant_id === "acme")).toBe(true);

    const after2 = await readStream(db.pool, streamId, { after: 2 });
    expect(after2.map((e) => e.metadata.seq)).toEqual([3, 4, 5]);
    const page = await readStream(db.pool, streamId, { after: 1, limit: 2 });
    expect(page.map((e) => e.metadata.seq)).toEqual([2, 3]);
    expect(await readStream(db.pool, streamId, { after: 5 })).toEqual([]);
    expect(await readStream(db.pool, randomUUID())).toEqual([]);
  });

  it("reads every stream by global position", async () => {
    const { rows } = await db.pool.query<{ p: number }>("SELECT coalesce(max(global_position), 0)::int AS p FROM events");
    const start = rows[0].p;
    const a = randomUUID();
    const b = randomUUID();
    await append(a, thoughts(1));
    await append(b, []);
    await append(a, thoughts(1, 2));

    const positioned = await readAll(db.pool, { after: start });
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

    const tail = await readAll(db.pool, { after: positions[1], limit: 1 });
    expect(tail).toHaveLength(1);
    expect(tail[0].position).toBe(positions[2]);
    expect(tail[0].event.metadata.run_id).toBe(b);
  });

  it("refuses UPDATE, DELETE and TRUNCATE on events (append-only trigger)", async () => {
    const streamId = randomUUID();
    await append(streamId, thoughts(1));
    const count = async () => (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events")).rows[0].n;
    const before = await count();

    await expect(db.pool.query("UPDATE events SET type = 'tampered' WHERE stream_id = $1", [streamId])).rejects.toThrow(/append-only/);
    await expect(db.pool.query("DELETE FROM events WHERE stream_id = $1", [streamId])).rejects.toThrow(/append-only/);
    await expect(db.pool.query("TRUNCATE events")).rejects.toThrow(/append-only/);

    expect(await count()).toBe(before);
    const { rows } = await db.pool.query<{ type: string }>("SELECT type FROM events WHERE stream_id = $1 ORDER BY version", [streamId]);
    expect(rows.map((r) => r.type)).toEqual(["run.queued", "thought"]);
  });
});
