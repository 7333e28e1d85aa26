import { randomUUID } from "node:crypto";
import { addSeconds, initialRunState, nowMicros } from "@steward/contract";
import { createLogger } from "@steward/platform";
import type { PolicyDecisionApi } from "@steward/proto";
import { appendRunEvents } from "@steward/store";
import { useFreshDatabase } from "../../../../../test/support/databases";
import { createToolRegistry } from "../../domain/registry";
import { createPgIdempotencyStore } from "../pg/idempotency-store";
import { createInvokeHandler, type InvokeCommand } from "../../app/invoke-tool";
import { proposeKnowledgeTool } from "./propose-knowledge";

/**
 * The tool through the invoke handler on real PostgreSQL (a permitting PDP): a proposal is queued with the call's
 * idempotency record, a retried call never queues twice, the limits and the content checks answer codes with
 * nothing stored, and a refused proposal's text is never echoed.
 */
describe("propose_knowledge", () => {
  const db = useFreshDatabase("steward_tool_exec_proposals", 6);
  const asked: string[] = [];
  const pdp: PolicyDecisionApi = {
    decide: async (request: { action: string }) => {
      asked.push(request.action);
      return { permit: true, code: "", reasons: [], policyIds: ["member-knowledge-proposals"] };
    },
    state: () => "READY",
    close: () => undefined,
  } as unknown as PolicyDecisionApi;
  let invoke: ReturnType<typeof createInvokeHandler>;

  beforeAll(() => {
    const registry = createToolRegistry([proposeKnowledgeTool(db.pool)]);
    invoke = createInvokeHandler({ registry, pdp, results: createPgIdempotencyStore(db.pool), logger: createLogger("tool-exec", "silent") });
  });

  async function newRun(threadId: string | null = null): Promise<string> {
    const runId = randomUUID();
    const at = nowMicros();
    await appendRunEvents(db.pool, {
      runId,
      tenantId: "acme",
      state: initialRunState,
      namespace: "tool",
      events: [
        {
          type: "run.queued",
          data: {
            input: "hi",
            mode: "agent",
            response_language: null,
            created_by: "ana",
            created_at: at,
            deadline_at: addSeconds(at, 180),
            thread_id: threadId,
          },
        },
      ],
    });
    return runId;
  }
  const call = (runId: string, args: unknown, stepNo = 1): InvokeCommand => ({
    runId,
    tenantId: "acme",
    userId: "ana",
    stepNo,
    callId: `c${stepNo}`,
    toolName: "propose_knowledge",
    argumentsJson: JSON.stringify(args),
    elevationSessionId: "",
  });
  const stored = async (runId: string) =>
    (
      await db.pool.query(
        "SELECT id::text, title, content, evidence_quote, step_no, thread_id::text FROM knowledge_proposals WHERE run_id = $1 ORDER BY created_at",
        [runId],
      )
    ).rows;

  it("asks the PDP for knowledge.proposal.create, queues a pending proposal of the run's thread, and a retry never queues twice", async () => {
    const thread = randomUUID();
    const run = await newRun(thread);
    const args = { title: "  Nuuk ferry ", content: "Parcels to Greenland go by the weekly Nuuk ferry.", evidence_quote: "weekly ferry" };
    const first = await invoke(call(run, args, 3));
    expect(asked.at(-1)).toBe("knowledge.proposal.create");
    expect(first.resultCode).toBe("ok");
    expect(first.result.result).toMatchObject({ proposal_id: expect.any(String), status: "pending", title: "Nuuk ferry" });
    const again = await invoke(call(run, { ...args, title: "Nuuk ferry" }, 3));
    expect([again.replayed, again.result.result]).toEqual([true, first.result.result]);
    expect(await stored(run)).toEqual([
      {
        id: (first.result.result as { proposal_id: string }).proposal_id,
        title: "Nuuk ferry",
        content: args.content,
        evidence_quote: "weekly ferry",
        step_no: 3,
        thread_id: thread,
      },
    ]);
  });

  it("answers PROPOSAL_LIMIT_REACHED for a third proposal of a run, keeping nothing of it", async () => {
    const run = await newRun();
    const codes = [];
    for (let i = 1; i <= 3; i++) codes.push((await invoke(call(run, { title: `Fact ${i}`, content: `Fact number ${i} holds.` }, i))).resultCode);
    expect(codes).toEqual(["ok", "ok", "PROPOSAL_LIMIT_REACHED"]);
    const refused = await invoke(call(run, { title: "Fact 3", content: "Fact number 3 holds." }, 3));
    expect(refused.result.result).toMatchObject({ error_code: "PROPOSAL_LIMIT_REACHED", limit: "run", max: 2 });
    expect(await stored(run)).toHaveLength(2);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM tool_results WHERE run_id = $1", [run])).rows[0].n).toBe(2);
  });

  it.each([
    ["secret", { title: "Key", content: "Use sk-live-0123456789abcdefABCDEF for the API." }, "sk-live-0123456789abcdefABCDEF"],
    ["sql", { title: "Orders", content: "Run SELECT id FROM orders to list them." }, "SELECT id FROM orders"],
    ["table_name", { title: "Where", content: "Everything lives in kb_documents." }, "kb_documents"],
    ["secret", { title: "Login", content: "ok", evidence_quote: "password=Winter2024!" }, "Winter2024!"],
  ])("rejects content carrying %s with PROPOSAL_REJECTED, never echoing it, storing nothing", async (reason, args, text) => {
    const run = await newRun();
    const out = await invoke(call(run, args));
    expect(out.resultCode).toBe("PROPOSAL_REJECTED");
    expect(out.result.result).toMatchObject({ error_code: "PROPOSAL_REJECTED", reason });
    expect(JSON.stringify(out)).not.toContain(text);
    expect(await stored(run)).toEqual([]);
  });

  it("refuses arguments outside its closed schema (another key, a blank title, too long) before anything runs", async () => {
    const run = await newRun();
    for (const args of [{ title: "t", content: "c", sql: "x" }, { title: "   ", content: "c" }, { title: "t", content: "c".repeat(4001) }, { content: "c" }]) {
      await expect(invoke(call(run, args))).rejects.toThrow(/arguments do not match the schema/);
    }
    expect(await stored(run)).toEqual([]);
  });
});
