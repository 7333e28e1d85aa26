import { randomUUID } from "node:crypto";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { busNames } from "@steward/contract";
import { connectNats, createLogger, createPool, provisionTopology, type NatsConnection, type Pool } from "@steward/platform";
import { createOutboxRelay } from "../outbox/relay";
import { dropDatabase, ensureDatabase, migrate, migrationsDir } from "./migrate";
import { databaseUrl, freshNamespace, natsUrl } from "../../../../test/support/databases";
import { readSubject } from "../../../../test/support/bus";

jest.setTimeout(60_000);

/**
 * Migration 029 on a database written in the old shape (every event's bus copy a row of the outbox): nothing that
 * was committed and not yet on the bus is lost, and it goes out in the run's order.
 */
describe("migration 029: an outbox of the old shape becomes the runs' unpublished versions", () => {
  const db = { url: databaseUrl(`steward_store_m29_${randomUUID().slice(0, 8)}`) };
  let pool: Pool;
  let nc: NatsConnection;
  let before: string;
  const names = busNames(freshNamespace("m29"));

  beforeAll(async () => {
    await ensureDatabase(db.url);
    before = await mkdtemp(join(tmpdir(), "steward-m29-"));
    for (const file of (await readdir(migrationsDir)).filter((f) => f < "029")) await cp(join(migrationsDir, file), join(before, file));
    await migrate(db.url, before);
    pool = createPool(db.url, { max: 4 });
    nc = await connectNats(natsUrl, "steward-m29-test");
    await provisionTopology(nc, names);
  });

  afterAll(async () => {
    await nc?.close().catch(() => undefined);
    await pool?.end().catch(() => undefined);
    if (before) await rm(before, { recursive: true, force: true });
    await dropDatabase(db.url);
  });

  /** A run of `version` events, as the old append left it: a copy row per event, `published` of them marked. */
  async function oldRun(state: string, version: number, published: number): Promise<{ runId: string; eventIds: string[] }> {
    const runId = randomUUID();
    const eventIds = Array.from({ length: version }, () => randomUUID());
    await pool.query(
      `INSERT INTO runs (id, tenant_id, created_by, state, mode, input, created_at, deadline_at, usage, version)
       VALUES ($1, 't', 'u', $2, 'agent', 'q', now(), now() + interval '1 hour', '{}', $3)`,
      [runId, state, version],
    );
    for (const [i, eventId] of eventIds.entries()) {
      const seq = i + 1;
      await pool.query(`INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, 't', $3, 'thought', '{}')`, [
        eventId,
        runId,
        seq,
      ]);
      await pool.query(
        `INSERT INTO outbox (run_id, subject, msg_id, payload, headers, published_at)
         VALUES ($1::uuid, $2, $3, '{}', jsonb_build_object('Steward-Run-Id', $1::text, 'Steward-Event-Type', 'thought', 'Steward-Seq', $4::text),
                 CASE WHEN $4::int <= $5::int THEN now() END)`,
        [runId, names.runEvent(runId, "thought"), eventId, seq, published],
      );
    }
    return { runId, eventIds };
  }

  it("converts pending copies into unpublished versions, orders a pending command after the copies before it, and a relay publishes them in order", async () => {
    // Run a: events 1–3, only 1 on the bus, and a command written after event 2 (its row between the copies).
    const a = await oldRun("running", 2, 1);
    const { rows: cmd } = await pool.query<{ id: string }>(
      `INSERT INTO outbox (run_id, subject, msg_id, payload, headers) VALUES ($1, $2, $3, '{}', '{}') RETURNING id`,
      [a.runId, names.runRequested, `cmd-${a.runId}`],
    );
    const third = randomUUID();
    await pool.query("UPDATE runs SET version = 3 WHERE id = $1", [a.runId]);
    await pool.query(`INSERT INTO events (event_id, stream_id, tenant_id, version, type, data) VALUES ($1, $2, 't', 3, 'thought', '{}')`, [third, a.runId]);
    await pool.query(
      `INSERT INTO outbox (run_id, subject, msg_id, payload, headers)
       VALUES ($1::uuid, $2, $3, '{}', jsonb_build_object('Steward-Run-Id', $1::text, 'Steward-Event-Type', 'thought', 'Steward-Seq', '3'))`,
      [a.runId, names.runEvent(a.runId, "thought"), third],
    );
    // Run b ended with all of its events on the bus.
    const b = await oldRun("succeeded", 2, 2);

    // 029 and the migrations after it.
    expect((await migrate(db.url)).filter((f) => f < "030")).toEqual(["029_events_as_outbox.sql"]);

    const runs = await pool.query<{ id: string; published_version: number; events_subject: string | null; bus_settled: boolean }>(
      "SELECT id, published_version, events_subject, bus_settled FROM runs WHERE id = ANY($1::uuid[])",
      [[a.runId, b.runId]],
    );
    const byId = new Map(runs.rows.map((r) => [r.id, r]));
    expect(byId.get(a.runId)).toMatchObject({ published_version: 1, events_subject: names.runEvent(a.runId, ""), bus_settled: false });
    expect(byId.get(b.runId)).toMatchObject({ published_version: 2, bus_settled: true });
    const outbox = await pool.query<{ id: string; after_version: number | null; copy: boolean }>(
      "SELECT id, after_version, headers ? 'Steward-Seq' AS copy FROM outbox WHERE published_at IS NULL ORDER BY id",
    );
    expect(outbox.rows).toEqual([{ id: cmd[0].id, after_version: 2, copy: false }]);

    const relay = createOutboxRelay({ pool, nc, connectionString: db.url, logger: createLogger("m29-test", "silent") }, { sweepMs: 600_000 });
    expect(await relay.drain()).toBe(3);
    await relay.stop();
    const onBus = await readSubject(nc, names.eventStream, names.runEvents(a.runId));
    expect(onBus.map((m) => m.headers["Nats-Msg-Id"])).toEqual([a.eventIds[1], third]);
    const after = await pool.query("SELECT published_version FROM runs WHERE id = $1", [a.runId]);
    expect(after.rows[0].published_version).toBe(3);
    const command = await pool.query("SELECT published_at IS NOT NULL AS published FROM outbox WHERE id = $1", [cmd[0].id]);
    expect(command.rows[0].published).toBe(true);
  });
});
