import { createMetrics, sampleValue } from "@steward/platform";
import { useFreshDatabase } from "../../../../../test/support/databases";
import { watchOutbox } from "./outbox-gauges";

/** The backlog gauge, the oldest row's age and the publish lag, read from a real outbox table. */
describe("outbox gauges (real PostgreSQL)", () => {
  const db = useFreshDatabase("steward_runner_outbox_metrics");
  const insert = (n: number, ageSeconds: number) =>
    db.pool.query(
      `INSERT INTO outbox (subject, msg_id, payload, created_at)
       SELECT 'x.events', gen_random_uuid()::text, '{}', clock_timestamp() - make_interval(secs => $2) FROM generate_series(1, $1)`,
      [n, ageSeconds],
    );

  it("reports the waiting rows and the oldest one's age, then the lag of the rows published since", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    watchOutbox(db.pool, metrics, { minIntervalMs: 0 });
    await insert(3, 30);
    await insert(2, 0);
    let text = await metrics.text();
    expect(sampleValue(text, "steward_outbox_backlog_messages")).toBe(5);
    expect(sampleValue(text, "steward_outbox_oldest_age_seconds")).toBeGreaterThanOrEqual(30);
    expect(sampleValue(text, "steward_outbox_publish_lag_seconds_count")).toBe(0);

    // The three old rows are published now: about 30 s after their commit.
    await db.pool.query("UPDATE outbox SET published_at = clock_timestamp() WHERE created_at < clock_timestamp() - interval '10 seconds'");
    text = await metrics.text();
    expect(sampleValue(text, "steward_outbox_backlog_messages")).toBe(2);
    expect(sampleValue(text, "steward_outbox_oldest_age_seconds")).toBeLessThan(30);
    expect(sampleValue(text, "steward_outbox_publish_lag_seconds_count")).toBe(3);
    expect(sampleValue(text, "steward_outbox_publish_lag_seconds_bucket", { le: "10" })).toBe(0);
    expect(sampleValue(text, "steward_outbox_publish_lag_seconds_bucket", { le: "60" })).toBe(3);

    // Nothing new published: nothing observed twice.
    text = await metrics.text();
    expect(sampleValue(text, "steward_outbox_publish_lag_seconds_count")).toBe(3);
    await db.pool.query("UPDATE outbox SET published_at = clock_timestamp() WHERE published_at IS NULL");
    text = await metrics.text();
    expect(sampleValue(text, "steward_outbox_backlog_messages")).toBe(0);
    expect(sampleValue(text, "steward_outbox_oldest_age_seconds")).toBe(0);
    expect(sampleValue(text, "steward_outbox_publish_lag_seconds_count")).toBe(5);
  });

  it("polls at most once per interval however often it is scraped", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    let statements = 0;
    const counting = new Proxy(db.pool, {
      get: (target, key) =>
        key === "query" ? (...args: unknown[]) => (statements++, (target.query as (...a: unknown[]) => unknown)(...args)) : Reflect.get(target, key),
    });
    watchOutbox(counting, metrics, { minIntervalMs: 60_000 });
    for (let i = 0; i < 5; i++) await metrics.text();
    expect(statements).toBe(1);
  });
});
