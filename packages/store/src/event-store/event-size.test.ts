import { randomUUID } from "node:crypto";
import { PayloadLimits, addSeconds, eventBytes, initialRunState, nowMicros, type RunEvent } from "@steward/contract";
import { createPool, type Pool } from "@steward/platform";
import { EventTooLargeError } from "./event-size";
import { appendRunEvents } from "../runs/append-run-events";
import { freshDatabase } from "../../../../test/support/databases";

/** A thought whose text makes the event exactly `bytes` long, as `eventBytes` counts it. */
function thoughtOf(bytes: number, stepNo = 1): RunEvent {
  const base = {
    type: "thought" as const,
    data: { step_no: stepNo, text: "", tool_calls: [], usage: { input_tokens: 1, output_tokens: 1 }, provider: "scripted" },
  };
  const event = { ...base, data: { ...base.data, text: "x".repeat(bytes - eventBytes(base)) } };
  expect(eventBytes(event)).toBe(bytes);
  return event;
}

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

describe("the event size guard of the event store (PostgreSQL)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;

  const counts = async (streamId: string) => {
    const { rows } = await pool.query<{ events: number; version: number | null; runs: number }>(
      `SELECT (SELECT count(*) FROM events WHERE stream_id = $1)::int AS events,
              (SELECT version FROM runs WHERE id = $1) AS version,
              (SELECT count(*) FROM runs WHERE id = $1)::int AS runs`,
      [streamId],
    );
    return rows[0];
  };

  beforeAll(async () => {
    db = await freshDatabase("steward_store_size");
    pool = createPool(db.url, { max: 4 });
  });

  afterAll(async () => {
    await pool?.end();
    if (db) await db.drop();
  });

  it("takes an event of exactly the limit and refuses one byte more, writing nothing of that append", async () => {
    const streamId = randomUUID();
    const input = { runId: streamId, tenantId: "acme", namespace: "sizecheck" };
    const atLimit = thoughtOf(PayloadLimits.eventBytes);
    const stored = await appendRunEvents(pool, { ...input, state: initialRunState, events: [queued(), atLimit] });
    expect(stored.events.map((e) => e.metadata.seq)).toEqual([1, 2]);

    const small = thoughtOf(500, 2);
    const over = thoughtOf(PayloadLimits.eventBytes + 1, 3);
    const refused = appendRunEvents(pool, { ...input, state: stored.state, events: [small, over] });
    await expect(refused).rejects.toBeInstanceOf(EventTooLargeError);
    await expect(refused).rejects.toThrow(
      `event thought of stream ${streamId} is ${PayloadLimits.eventBytes + 1} bytes, over the ${PayloadLimits.eventBytes}-byte event limit`,
    );
    // The message names sizes, never the content.
    await expect(refused).rejects.not.toThrow(/xxxx/);
    expect(await counts(streamId)).toEqual({ events: 2, version: 2, runs: 1 });
  });

  it("appendRunEvents refuses an oversized event before anything reaches the events or the projection", async () => {
    const runId = randomUUID();
    const input = { runId, tenantId: "acme", namespace: "sizecheck" };
    const first = await appendRunEvents(pool, { ...input, state: initialRunState, events: [queued()] });
    expect(await counts(runId)).toEqual({ events: 1, version: 1, runs: 1 });

    // A 1.5 MB result, the size a big dataset cell reaches: the guard fires whatever the event type.
    const huge: RunEvent = {
      type: "tool_result",
      data: {
        step_no: 1,
        call_id: "c1",
        tool_name: "run_query",
        fingerprint: "f",
        decision: { permit: true, code: "", policy_ids: [] },
        result_code: "ok",
        result: { rows: [["x".repeat(1_500_000)]] },
        evidence: [],
      },
    };
    const attempt = appendRunEvents(pool, { ...input, state: first.state, events: [thoughtOf(300), huge] });
    await expect(attempt).rejects.toMatchObject({ name: "EventTooLargeError", eventType: "tool_result", bytes: eventBytes(huge) });
    expect(await counts(runId)).toEqual({ events: 1, version: 1, runs: 1 });
  });
});
