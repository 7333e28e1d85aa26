import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { addSeconds, initialRunState, nowMicros, terminalStatuses, type RunError, type RunEvent, type RunState } from "@steward/contract";
import { createPool, type Pool } from "@steward/platform";
import { appendRunEvents, readStream } from "@steward/store";
import { resumePoint, streamRunEvents } from "./event-stream";
import type { RunFeed } from "../../nats/run-feed";
import { freshDatabase } from "../../../../../../test/support/databases";
import { openEventStream, type SseClient } from "../../../../../../test/support/sse";

/** No bus here: the stream finds new events by its own re-read of PostgreSQL (pollMs below). */
const quietFeed: RunFeed = { watch: () => ({ ready: Promise.resolve(), close: () => undefined }) };

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
const started: RunEvent = { type: "run.started", data: { runner_id: "r1", started_at: "2026-01-01T00:00:00.000000Z" } };
const thought = (stepNo: number): RunEvent => ({
  type: "thought",
  data: {
    step_no: stepNo,
    text: "",
    tool_calls: [{ call_id: `c${stepNo}`, tool_name: "knowledge_search", arguments: "{}" }],
    usage: { input_tokens: 1, output_tokens: 1 },
    provider: "scripted",
  },
});
const failed = (error: RunError): RunEvent => ({ type: "run.failed", data: { error, finished_at: nowMicros() } });
const succeeded: RunEvent = { type: "run.succeeded", data: { output: { text: "done", evidence: [] }, finished_at: "2026-01-01T00:00:01.000000Z" } };

const BUDGET_SPENT: RunError = { code: 60401, message: "the step budget is spent", step_no: 25 };

describe("the run event stream (SSE) over PostgreSQL", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let app: FastifyInstance;
  let base: string;
  const open: SseClient[] = [];

  async function append(runId: string, state: RunState, events: RunEvent[]): Promise<RunState> {
    return (await appendRunEvents(pool, { runId, tenantId: "acme", namespace: "sse", state, events })).state;
  }

  async function stream(runId: string, lastEventId?: string): Promise<SseClient> {
    const client = await openEventStream(`${base}/runs/${runId}/events`, "unused", lastEventId);
    open.push(client);
    return client;
  }

  /** What a client saw, as [event, id] pairs (no id: undefined). */
  const shape = (client: SseClient) => client.messages.map((m) => [m.event, m.id]);

  beforeAll(async () => {
    db = await freshDatabase("steward_gw_sse");
    pool = createPool(db.url, { max: 4 });
    app = Fastify();
    app.get<{ Params: { id: string } }>("/runs/:id/events", async (request, reply) => {
      const id = request.params.id;
      const after = resumePoint(request.headers["last-event-id"], undefined) ?? 0;
      const finished = async () => {
        const { rows } = await pool.query<{ state: string }>("SELECT state FROM runs WHERE id = $1", [id]);
        return terminalStatuses.includes(rows[0]?.state as never);
      };
      const readEvents = (after: number, limit: number) => readStream(pool, id, { after, limit });
      return streamRunEvents({ readEvents, feed: quietFeed, finished }, request, reply, id, after, { pollMs: 50 });
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const c of open) c.close();
    await app?.close();
    await pool?.end();
    if (db) await db.drop();
  });

  /** A run ended by the step budget as the stream shows it: the two summary events (no id) before run.failed. */
  const budgetEnded = [
    ["run.queued", "1"],
    ["run.started", "2"],
    ["thought", "3"],
    ["iteration_limit", undefined],
    ["error", undefined],
    ["run.failed", "4"],
  ];

  it("a run ended by the step budget streams iteration_limit and error (no id) just before run.failed, then ends", async () => {
    const runId = randomUUID();
    const state = await append(runId, initialRunState, [queued(), started, thought(1)]);
    await append(runId, state, [failed(BUDGET_SPENT)]);

    const client = await stream(runId);
    await client.ended;
    expect(shape(client)).toEqual(budgetEnded);
    const [limit, error, end] = client.messages.slice(3).map((m) => JSON.parse(m.data));
    expect(limit).toEqual({ code: 60401, message: "the step budget is spent", step_no: 25, limit: 25 });
    expect(error).toEqual({ code: 60401, message: "the step budget is spent", step_no: 25 });
    // The stored events keep their envelope.
    expect(end).toMatchObject({ seq: 4, type: "run.failed", data: { error: BUDGET_SPENT } });
    expect(Object.keys(end).sort()).toEqual(["data", "recorded_at", "seq", "type"]);
  });

  it("any other failure streams error with the run's error, and no iteration_limit; a success streams neither", async () => {
    const broken = randomUUID();
    const unparsable: RunError = { code: 60302, message: "the run's events cannot be read", step_no: 0 };
    await append(broken, await append(broken, initialRunState, [queued()]), [failed(unparsable)]);
    const fine = randomUUID();
    await append(fine, await append(fine, initialRunState, [queued(), started]), [succeeded]);

    const a = await stream(broken);
    const b = await stream(fine);
    await Promise.all([a.ended, b.ended]);
    expect(shape(a)).toEqual([
      ["run.queued", "1"],
      ["error", undefined],
      ["run.failed", "2"],
    ]);
    expect(JSON.parse(a.messages[1].data)).toEqual(unparsable);
    expect(shape(b)).toEqual([
      ["run.queued", "1"],
      ["run.started", "2"],
      ["run.succeeded", "3"],
    ]);
  });

  it("a stream resumed before run.failed repeats the summary with it; one resumed at run.failed ends at once", async () => {
    const runId = randomUUID();
    await append(runId, await append(runId, initialRunState, [queued(), started, thought(1)]), [failed(BUDGET_SPENT)]);

    const before = await stream(runId, "3");
    const at = await stream(runId, "4");
    await Promise.all([before.ended, at.ended]);
    expect(shape(before)).toEqual([
      ["iteration_limit", undefined],
      ["error", undefined],
      ["run.failed", "4"],
    ]);
    expect(at.messages).toEqual([]);
  });

  it("live: a run that fails while a client watches gets the summary before run.failed", async () => {
    const runId = randomUUID();
    const state = await append(runId, initialRunState, [queued(), started]);
    const client = await stream(runId);
    await client.until((m) => m.some((x) => x.event === "run.started"), 10_000);

    await append(runId, state, [thought(1), failed(BUDGET_SPENT)]);
    await client.ended;
    expect(shape(client)).toEqual(budgetEnded);
  });
});
