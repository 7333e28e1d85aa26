import { randomUUID } from "node:crypto";
import { addSeconds, busNames, nowMicros, type RunEvent } from "@steward/contract";
import { createRuns, type NewRunInput } from "./create-runs";
import { grantRole } from "../memberships/grant-role";
import { busCopyColumns } from "../event-store/bus-copy";
import { LOCK_RUNS_IN_ORDER } from "../outbox/bus-settled";
import { useFreshDatabase, withoutAutovacuum } from "../../../../test/support/databases";
import { waitFor } from "../../../../test/support/wait-for";

const NAMESPACE = "cruns";
const names = busNames(NAMESPACE);

function queued(input: string): RunEvent {
  const createdAt = nowMicros();
  return {
    type: "run.queued",
    data: {
      input,
      mode: "agent",
      response_language: null,
      created_by: "alice",
      created_at: createdAt,
      deadline_at: addSeconds(createdAt, 180),
      thread_id: null,
    },
  };
}

/** A permit's record as the gateway hands it over (column names as keys). */
function permitRow(runId: string, mcpMode: string | null = null): Record<string, unknown> {
  return {
    tenant_id: "acme",
    user_id: "alice",
    action: "agent.run.create",
    resource_type: "run",
    resource_id: runId,
    run_id: runId,
    permit: true,
    code: "",
    policy_ids: ["p1"],
    policy_version: 1,
    latency_ms: 0.2,
    mcp_mode: mcpMode,
  };
}

function newRun(input: string, more: Partial<NewRunInput> = {}): NewRunInput {
  const runId = randomUUID();
  return {
    runId,
    tenantId: "acme",
    namespace: NAMESPACE,
    events: [queued(input)],
    commands: [{ subject: names.runRequested, msgId: `run.requested.${runId}`, payload: { run_id: runId }, headers: { "Steward-Run-Id": runId } }],
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    permitRecord: permitRow(runId),
    ...more,
  };
}

describe("createRuns (PostgreSQL: many new runs in one statement, each written whole or skipped alone)", () => {
  const db = useFreshDatabase("steward_store_create_runs");

  /** What of a run is in the tables: its row, its events, its commands and its permit's records. */
  async function stored(runId: string) {
    const q = async (sql: string) => (await db.pool.query(sql, [runId])).rows;
    return {
      run: (
        await q("SELECT state, version, published_version, events_subject, publish_held_until IS NOT NULL AS held, idempotency_key FROM runs WHERE id = $1")
      )[0],
      events: await q("SELECT event_id::text, version, type, data->>'input' AS input, recorded_at FROM events WHERE stream_id = $1 ORDER BY version"),
      commands: await q("SELECT subject, msg_id, after_version, retry_at IS NOT NULL AS held FROM outbox WHERE run_id = $1 ORDER BY id"),
      permits: await q("SELECT action, permit FROM policy_decisions WHERE run_id = $1"),
    };
  }

  it("writes every run whole in one statement and answers each with its stored events and what its writer publishes", async () => {
    const runs = [newRun("one", { publishDirect: true, directCommands: true }), newRun("two", { publishDirect: true }), newRun("three")];
    const outcomes = await createRuns(db.pool, runs);
    expect(outcomes.map((o) => o.kind)).toEqual(["created", "created", "created"]);
    for (const [i, run] of runs.entries()) {
      const outcome = outcomes[i];
      if (outcome.kind !== "created") throw new Error("not created");
      const row = await stored(run.runId);
      const direct = i < 2;
      expect(row.run).toEqual({
        state: "queued",
        version: 1,
        published_version: 0,
        events_subject: names.runEvent(run.runId, ""),
        held: direct,
        idempotency_key: null,
      });
      expect(row.events).toEqual([expect.objectContaining({ version: 1, type: "run.queued", input: ["one", "two", "three"][i] })]);
      // A command goes after the events written with it; only a command its writer publishes is held from the relays.
      expect(row.commands).toEqual([{ subject: names.runRequested, msg_id: `run.requested.${run.runId}`, after_version: 1, held: i === 0 }]);
      expect(row.permits).toEqual([{ action: "agent.run.create", permit: true }]);
      const { appended } = outcome;
      expect(appended.state).toMatchObject({ status: "queued", version: 1, input: ["one", "two", "three"][i] });
      expect(appended.events.map((e) => [e.metadata.event_id, e.metadata.seq, e.metadata.recorded_at])).toEqual(
        row.events.map((e) => [e.event_id, e.version, e.recorded_at]),
      );
      // The copy is the message a relay would build from the events table.
      const relayed = (
        await db.pool.query(`SELECT e.event_id::text AS id, ${busCopyColumns("e", "$2")} FROM events e WHERE e.stream_id = $1`, [
          run.runId,
          names.runEvent(run.runId, ""),
        ])
      ).rows;
      const copies = appended.direct.filter((r) => r.version !== undefined);
      expect(copies).toEqual(direct ? relayed.map((r) => ({ ...r, version: 1 })) : []);
      const commands = appended.direct.filter((r) => r.version === undefined);
      expect(commands.map((c) => [c.subject, JSON.parse(c.payload), c.headers["Steward-Published-Through"] === String(c.id)])).toEqual(
        i === 0 ? [[names.runRequested, { run_id: run.runId }, true]] : [],
      );
    }
  });

  it("costs one commit for the lot", async () => {
    await withoutAutovacuum(db.pool);
    const client = await db.pool.connect();
    try {
      const commits = async () => {
        await client.query("SELECT pg_stat_force_next_flush()");
        return (await client.query("SELECT xact_commit::int AS c FROM pg_stat_database WHERE datname = current_database()")).rows[0].c as number;
      };
      const idle = -(await commits()) + (await commits());
      const before = await commits();
      const outcomes = await createRuns(
        client as never,
        Array.from({ length: 20 }, (_, i) => newRun(`batch ${i}`)),
      );
      const after = await commits();
      expect(outcomes.filter((o) => o.kind === "created")).toHaveLength(20);
      expect(after - before - idle).toBe(1);
    } finally {
      client.release();
    }
  });

  it("leaves room beside the runs it writes for their marks: each mark is an update in place (HOT), touching no index", async () => {
    const client = await db.pool.connect();
    try {
      const updates = async () => {
        await client.query("SELECT pg_stat_force_next_flush()");
        return (await client.query("SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'runs'")).rows[0] as {
          upd: number;
          hot: number;
        };
      };
      const before = await updates();
      // Batches as full as the gateway's, so that a page holds nothing but runs written together.
      for (let b = 0; b < 4; b++) {
        const runs = Array.from({ length: 32 }, (_, i) => newRun(`marked ${b}.${i} `.repeat(20), { publishDirect: true, directCommands: true }));
        await createRuns(client as never, runs);
        // The writer's mark once the copies are on the bus (the statement of `markPublished`, its lock included).
        await client.query(
          `WITH v AS (SELECT * FROM unnest($1::uuid[]) AS v(id)),
           ${LOCK_RUNS_IN_ORDER("v")}
           UPDATE runs r SET published_version = 1 FROM locked l WHERE r.id = l.id`,
          [runs.map((r) => r.runId)],
        );
      }
      const after = await updates();
      expect({ updates: after.upd - before.upd, hot: after.hot - before.hot }).toEqual({ updates: 128, hot: 128 });
    } finally {
      client.release();
    }
  });

  it("skips alone a run whose Idempotency-Key names a run already there, or one earlier in the same statement", async () => {
    const [first] = await createRuns(db.pool, [newRun("keyed", { idempotencyKey: "k-1", requestHash: "h" })]);
    expect(first.kind).toBe("created");
    const runs = [
      newRun("retry", { idempotencyKey: "k-1", requestHash: "h" }),
      newRun("fresh", { idempotencyKey: "k-2", requestHash: "h" }),
      newRun("fresh again", { idempotencyKey: "k-2", requestHash: "h" }),
      newRun("no key"),
    ];
    const outcomes = await createRuns(db.pool, runs);
    expect(outcomes.map((o) => o.kind)).toEqual(["key_used", "created", "key_used", "created"]);
    for (const skipped of [runs[0], runs[2]]) {
      expect(await stored(skipped.runId)).toEqual({ run: undefined, events: [], commands: [], permits: [] });
    }
    expect((await stored(runs[1].runId)).run).toMatchObject({ idempotency_key: "k-2" });
    expect((await stored(runs[3].runId)).events).toHaveLength(1);
  });

  it("skips alone a run whose permit rests on roles its member no longer holds", async () => {
    await grantRole(db.pool, "acme", "alice", "member", { userId: "root" });
    const runs = [newRun("roles held", { permitRoles: ["member"] }), newRun("roles changed", { permitRoles: ["admin"] }), newRun("decided on roles read")];
    const outcomes = await createRuns(db.pool, runs);
    expect(outcomes.map((o) => o.kind)).toEqual(["created", "roles_changed", "created"]);
    expect(await stored(runs[1].runId)).toEqual({ run: undefined, events: [], commands: [], permits: [] });
    expect((await stored(runs[0].runId)).permits).toHaveLength(1);
  });

  it("wakes the relays for a run its writer does not publish, and not for one it does", async () => {
    const listener = await db.pool.connect();
    const woken: string[] = [];
    listener.on("notification", (n) => woken.push(n.channel));
    try {
      await listener.query("LISTEN steward_outbox");
      await createRuns(db.pool, [newRun("published by its writer", { publishDirect: true, directCommands: true })]);
      // A notification sent at that commit reaches the listener when its next transaction ends, before its answer.
      await listener.query("SELECT 1");
      expect(woken).toEqual([]);
      await createRuns(db.pool, [newRun("left to the relays")]);
      await waitFor(() => (woken.length > 0 ? true : undefined), { timeoutMs: 5000, what: "a notification" });
      expect(woken).toEqual(["steward_outbox"]);
    } finally {
      await listener.query("UNLISTEN *").catch(() => undefined);
      listener.release();
    }
  });

  it("writes nothing when PostgreSQL refuses one run's data, and says so with its code", async () => {
    const good = newRun("good");
    const bad = newRun("bad", { permitRecord: { ...permitRow(randomUUID()), mcp_mode: "not a mode" } });
    await expect(createRuns(db.pool, [good, bad])).rejects.toMatchObject({ code: "23514" });
    expect(await stored(good.runId)).toEqual({ run: undefined, events: [], commands: [], permits: [] });
  });

  it("refuses an event over the size limit before anything is sent", async () => {
    const huge = newRun("x".repeat(300_000));
    await expect(createRuns(db.pool, [huge])).rejects.toMatchObject({ name: "EventTooLargeError" });
    expect((await stored(huge.runId)).run).toBeUndefined();
  });
});
