import { foldRun, nowMicros, type RunEvent } from "@steward/contract";
import { ConflictError, type Pool } from "@steward/platform";
import { appendRunEvents, readStream } from "@steward/store";
import { createRunControls } from "./control-run";
import { createRunHandler } from "./create-run";
import { createPgRunWriter } from "../adapters/pg/run-writer";
import { useFreshDatabase } from "../../../../test/support/databases";

const NAMESPACE = "controls";
const ana = { tenantId: "acme", userId: "ana", roles: ["member"] };

/**
 * A cancel that races the runner's append (real PostgreSQL): the runner's event lands between the cancel's read
 * and its append, which then meets the stream at another version.
 */
describe("cancel against a run its runner is appending to", () => {
  const db = useFreshDatabase("steward_gateway_controls");
  /** The runner's next event, appended once just before the control's own append reaches the database. */
  let competing: RunEvent | null = null;

  function racingPool(pool: Pool): Pool {
    return {
      // A text with its values, or a prepared statement's config (the append: name, text and values).
      query: async (query: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
        const event = competing;
        const text = typeof query === "string" ? query : query.text;
        if (event && text.includes("INSERT INTO outbox")) {
          competing = null;
          const runId = (typeof query === "string" ? values : query.values)![0] as string;
          await appendRunEvents(pool, { runId, tenantId: ana.tenantId, state: foldRun(await readStream(pool, runId)), events: [event], namespace: NAMESPACE });
        }
        return pool.query(query as string, values);
      },
      connect: () => pool.connect(),
    } as unknown as Pool;
  }

  async function queuedRun(): Promise<string> {
    const createRun = createRunHandler({ runs: createPgRunWriter({ pool: db.pool, namespace: NAMESPACE }), namespace: NAMESPACE });
    return (await createRun({ principal: ana, body: { input: "hello" }, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" })).id;
  }
  const typesOf = async (runId: string) => (await readStream(db.pool, runId)).map((e) => e.type);

  it("reads the run again and records the cancel after the runner's event, as for a running run", async () => {
    const runId = await queuedRun();
    competing = { type: "run.started", data: { runner_id: "r1", started_at: nowMicros() } };
    const controls = createRunControls({ runs: createPgRunWriter({ pool: racingPool(db.pool), namespace: NAMESPACE }), namespace: NAMESPACE });
    const snapshot = await controls.cancel(ana, runId, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    expect(competing).toBeNull();
    expect(snapshot.state).toBe("running");
    expect(await typesOf(runId)).toEqual(["run.queued", "run.started", "run.cancel_requested"]);
  });

  it("is refused (409) when the runner's event ended the run meanwhile, and records nothing", async () => {
    const runId = await queuedRun();
    competing = { type: "run.cancelled", data: { error: { code: 60405, message: "the run was cancelled" }, finished_at: nowMicros() } };
    const controls = createRunControls({ runs: createPgRunWriter({ pool: racingPool(db.pool), namespace: NAMESPACE }), namespace: NAMESPACE });
    await expect(controls.cancel(ana, runId, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")).rejects.toThrow(ConflictError);
    expect(await typesOf(runId)).toEqual(["run.queued", "run.cancelled"]);
  });

  it("still refuses an answer that raced the runner (409): it may no longer be the question the person saw", async () => {
    const runId = await queuedRun();
    const pool = db.pool;
    const askedAt = nowMicros();
    await appendRunEvents(pool, {
      runId,
      tenantId: ana.tenantId,
      state: foldRun(await readStream(pool, runId)),
      events: [
        { type: "run.started", data: { runner_id: "r1", started_at: askedAt } },
        { type: "ask_user", data: { step_no: 1, call_id: "q0", question: "Which region?", options: [], asked_at: askedAt } },
      ],
      namespace: NAMESPACE,
    });
    competing = { type: "run.cancel_requested", data: { requested_at: nowMicros() } };
    const controls = createRunControls({ runs: createPgRunWriter({ pool: racingPool(pool), namespace: NAMESPACE }), namespace: NAMESPACE });
    await expect(controls.answer(ana, runId, "EU", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")).rejects.toThrow(/changed meanwhile/);
  });
});
