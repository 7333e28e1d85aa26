import pg from "pg";
import { busNames } from "@steward/contract";
import { addDocument } from "@steward/store";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { readSubject } from "../support/bus";
import { publishedRows } from "../support/runs";
import { waitFor } from "../support/wait-for";
import { openEventStream, type SseClient } from "../support/sse";

/** Resolves when the server ends the stream; fails (and closes it) if it is still open after `boundMs`. */
function endsWithin(stream: SseClient, boundMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stream.close();
      reject(new Error(`the stream was still open after ${boundMs} ms`));
    }, boundMs);
  });
  return Promise.race([stream.ended, bound]).finally(() => clearTimeout(timer));
}

jest.setTimeout(120_000);

describe("the spine: gateway → outbox → JetStream → agent-runner → tool-exec → policy", () => {
  let platform: TestPlatform;
  let pool: pg.Pool;
  let alice: string;
  let bob: string;
  let runId: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    await addDocument(pool, {
      tenantId: "acme",
      title: "Refund policy",
      body: "Customers may ask for a refund within 30 days of purchase. Refunds go back to the original card.",
    });
    await addDocument(pool, { tenantId: "acme", title: "Office hours", body: "The office is open from 9 to 17 on weekdays." });
    alice = await platform.token({ tenant: "acme", user: "alice" });
    bob = await platform.token({ tenant: "acme", user: "bob" });
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
  });

  it("answers 201 with a queued snapshot, then the run succeeds with output and usage", async () => {
    const created = await platform.http("POST", "/v1/agents/runs", { token: alice, body: { input: "How long do I have to ask for a refund?" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ state: "queued", mode: "agent", output: null, error: null, started_at: null });
    expect(created.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    const deadlineGap = Date.parse(created.body.deadline_at) - Date.parse(created.body.created_at);
    expect(deadlineGap).toBe(180_000);
    expect(created.body.deadline_at.slice(-8)).toBe(created.body.created_at.slice(-8));
    runId = created.body.id;

    const done = await waitFor(
      async () => {
        const r = await platform.http("GET", `/v1/agents/runs/${runId}`, { token: alice });
        return ["succeeded", "failed"].includes(r.body.state) ? r : undefined;
      },
      { what: "the run to finish" },
    );
    expect(done.status).toBe(200);
    expect(done.body.state).toBe("succeeded");
    expect(done.body.output.text).toContain("Refund policy");
    expect(done.body.output.evidence.map((e: { title: string }) => e.title)).toContain("Refund policy");
    expect(done.body.usage).toMatchObject({ model_calls: 2, tool_calls: 1 });
    expect(done.body.usage.input_tokens).toBeGreaterThan(0);
    expect(done.body.started_at).not.toBeNull();
    expect(done.body.finished_at >= done.body.started_at).toBe(true);
  });

  it("stores the run's events in PostgreSQL in order, with no gap", async () => {
    const { rows } = await pool.query<{ version: number; type: string; event_id: string }>(
      "SELECT version, type, event_id FROM events WHERE stream_id = $1 ORDER BY global_position",
      [runId],
    );
    expect(rows.map((r) => r.version)).toEqual(rows.map((_, i) => i + 1));
    expect(rows.map((r) => r.type)).toEqual(["run.queued", "run.started", "thought", "tool_call", "tool.decided", "tool_result", "message", "run.succeeded"]);
    const page = await platform.http("GET", `/v1/agents/runs/${runId}/events?after=2`, { token: alice });
    expect(page.status).toBe(200);
    expect(page.body.items.map((e: { seq: number }) => e.seq)).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it("ends the event stream of a finished run right after the terminal event, also when resumed at or past it", async () => {
    const url = `${platform.gatewayUrl}/v1/agents/runs/${runId}/events`;
    const whole = await openEventStream(url, alice);
    await endsWithin(whole, 10_000);
    expect(whole.messages.map((m) => m.id)).toEqual(["1", "2", "3", "4", "5", "6", "7", "8"]);
    const last = await openEventStream(url, alice, "7");
    await endsWithin(last, 10_000);
    expect(last.messages.map((m) => [m.id, m.event])).toEqual([["8", "run.succeeded"]]);
    // Past the terminal event nothing will ever come: the stream ends at once instead of polling forever.
    for (const resumed of [await openEventStream(url, alice, "8"), await openEventStream(`${url}?after=999`, alice)]) {
      await endsWithin(resumed, 10_000);
      expect(resumed.messages).toEqual([]);
    }
  });

  it("publishes every event to JetStream under the run's subjects, once, with Nats-Msg-Id = event id", async () => {
    const { rows } = await pool.query<{ version: number; type: string; event_id: string }>(
      "SELECT version, type, event_id FROM events WHERE stream_id = $1 ORDER BY version",
      [runId],
    );
    const names = busNames(platform.namespace);
    const nc = await platform.nats();
    const onBus = await waitFor(
      async () => {
        const msgs = await readSubject(nc, names.eventStream, names.runEvents(runId));
        return msgs.length >= rows.length ? msgs : undefined;
      },
      { what: "the events on the bus" },
    );
    expect(onBus).toHaveLength(rows.length);
    const bySeq = [...onBus].sort((a, b) => a.json.metadata.seq - b.json.metadata.seq);
    expect(bySeq.map((m) => m.subject)).toEqual(rows.map((r) => names.runEvent(runId, r.type)));
    expect(bySeq.map((m) => m.headers["Nats-Msg-Id"])).toEqual(rows.map((r) => r.event_id));
    expect(bySeq.every((m) => m.headers["Steward-Run-Id"] === runId)).toBe(true);
    expect(bySeq.every((m) => /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/.test(m.headers.traceparent))).toBe(true);
    // On the bus in the run's order.
    expect(onBus.map((m) => m.json.metadata.seq)).toEqual(rows.map((r) => r.version));
  });

  it("every writer publishes its own rows right after their commit: the gateway the copy and the command, the runner its events", async () => {
    // What a writer publishes itself is kept from the relays for 2 s; a copy a relay publishes carries its header.
    // The gateway's command vouches for the copy it published before it, so the runner's first append needs no
    // relay either (packages/store/src/outbox/direct-publisher.test.ts has the path itself).
    const published = await publishedRows(pool, await platform.nats(), platform.namespace, runId);
    expect(published.slice(0, 2).map((r) => r.type)).toEqual(["run.queued", "command"]);
    expect(published.length).toBeGreaterThan(5);
    expect(published.filter((r) => !r.byWriter)).toEqual([]);
  });

  it("lists only the caller's own runs, newest first", async () => {
    const second = await platform.http("POST", "/v1/agents/runs", { token: alice, body: { input: "office hours?" } });
    expect(second.status).toBe(201);
    const list = await platform.http("GET", "/v1/agents/runs?page=1&page_size=10", { token: alice });
    expect(list.status).toBe(200);
    expect(list.body.items.map((r: { id: string }) => r.id)).toEqual([second.body.id, runId]);
    const bobs = await platform.http("GET", "/v1/agents/runs", { token: bob });
    expect(bobs.body).toMatchObject({ items: [], total: 0 });
  });

  it("answers 404/10050 to another user of the same tenant, as for a run that does not exist", async () => {
    const other = await platform.http("GET", `/v1/agents/runs/${runId}`, { token: bob });
    expect(other.status).toBe(404);
    expect(other.headers.get("content-type")).toContain("application/problem+json");
    expect(other.body.code).toBe(10050);
    const missing = await platform.http("GET", "/v1/agents/runs/00000000-0000-4000-8000-000000000000", { token: bob });
    expect(missing.body).toEqual(other.body);
    const events = await platform.http("GET", `/v1/agents/runs/${runId}/events`, { token: bob });
    expect(events.status).toBe(404);
  });

  it("rejects a body with an extra key with 400/10001 and creates nothing", async () => {
    const before = await pool.query("SELECT count(*)::int AS n FROM runs");
    const res = await platform.http("POST", "/v1/agents/runs", { token: alice, body: { input: "hi", temperature: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(10001);
    const notJson = await platform.http("POST", "/v1/agents/runs", { token: alice, rawBody: "{nope" });
    expect(notJson.status).toBe(400);
    expect(notJson.body.code).toBe(10001);
    const blank = await platform.http("POST", "/v1/agents/runs", { token: alice, body: { input: " \n\t " } });
    expect(blank.status).toBe(422);
    expect(blank.body.code).toBe(10430);
    const after = await pool.query("SELECT count(*)::int AS n FROM runs");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it("answers 401/10011 without a valid token, and 403/10031 when the PDP denies the route", async () => {
    const none = await platform.http("GET", "/v1/agents/runs");
    expect(none.status).toBe(401);
    expect(none.body.code).toBe(10011);
    const forged = await platform.http("GET", "/v1/agents/runs", { token: `${alice.slice(0, -4)}AAAA` });
    expect(forged.status).toBe(401);
    const roleless = await platform.token({ tenant: "acme", user: "carol", roles: ["guest"] });
    const denied = await platform.http("POST", "/v1/agents/runs", { token: roleless, body: { input: "hi" } });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe(10031);
  });
});
