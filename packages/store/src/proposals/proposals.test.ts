import { randomUUID } from "node:crypto";
import { addSeconds, initialRunState, nowMicros } from "@steward/contract";
import { inTransaction } from "@steward/platform";
import { appendRunEvents } from "../runs/append-run-events";
import { readDocument } from "../knowledge/documents";
import { searchKnowledge } from "../knowledge/search";
import { useFreshDatabase } from "../../../../test/support/databases";
import { queueProposal, type QueueProposalInput } from "./queue-proposal";
import { decideProposal } from "./decide-proposal";
import { findProposal, listProposals } from "./queries";

// The member's bound outside threads is its own spec's; here it stays out of the way.
const LIMITS = { perRun: 2, pendingPerThread: 5, pendingPerMemberOutsideThreads: 1000 };

describe("knowledge proposals (PostgreSQL: limits race-free, decisions race-free, provenance)", () => {
  const db = useFreshDatabase("steward_store_proposals", 8);

  async function newRun(threadId: string | null, createdBy = "ana", tenantId = "acme"): Promise<string> {
    const runId = randomUUID();
    const createdAt = nowMicros();
    await appendRunEvents(db.pool, {
      runId,
      tenantId,
      state: initialRunState,
      namespace: "prp",
      events: [
        {
          type: "run.queued",
          data: {
            input: "hello",
            mode: "agent",
            response_language: null,
            created_by: createdBy,
            created_at: createdAt,
            deadline_at: addSeconds(createdAt, 180),
            thread_id: threadId,
          },
        },
      ],
    });
    return runId;
  }

  const input = (runId: string, n: number, over: Partial<QueueProposalInput> = {}): QueueProposalInput => ({
    tenantId: "acme",
    runId,
    stepNo: n,
    fingerprint: `fp-${n}-${randomUUID()}`,
    proposedBy: "ana",
    title: `Fact ${n}`,
    content: `Parcels to region ${n} ship within ${n} days.`,
    evidenceQuote: null,
    ...over,
  });
  const queue = (i: QueueProposalInput) => inTransaction(db.pool, (client) => queueProposal(client, i, LIMITS));

  it("queues at most 2 per run, and tells which limit refused the third", async () => {
    const run = await newRun(null);
    const first = await queue(input(run, 1, { evidenceQuote: "ships in 1 day" }));
    expect(first).toMatchObject({
      kind: "queued",
      proposal: { status: "pending", run_id: run, thread_id: null, step_no: 1, proposed_by: "ana", evidence_quote: "ships in 1 day" },
    });
    if (first.kind !== "queued") throw new Error("queued");
    expect(first.proposal.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(await queue(input(run, 2))).toMatchObject({ kind: "queued" });
    expect(await queue(input(run, 3))).toEqual({ kind: "limit", limit: "run", max: 2 });
    expect((await db.pool.query("SELECT count(*)::int AS n FROM knowledge_proposals WHERE run_id = $1", [run])).rows[0].n).toBe(2);
  });

  it("queues at most 5 pending per thread across its runs; deciding one makes room", async () => {
    const thread = randomUUID();
    const runs = [await newRun(thread), await newRun(thread), await newRun(thread)];
    const queued = [];
    for (const [i, run] of [runs[0], runs[0], runs[1], runs[1], runs[2]].entries()) queued.push(await queue(input(run, i + 1)));
    expect(queued.map((q) => q.kind)).toEqual(["queued", "queued", "queued", "queued", "queued"]);
    const later = await newRun(thread);
    expect(await queue(input(later, 9))).toEqual({ kind: "limit", limit: "thread", max: 5 });
    const one = queued[0].kind === "queued" ? queued[0].proposal.id : "";
    expect(await decideProposal(db.pool, { tenantId: "acme", proposalId: one, proposedBy: "ana", decidedBy: "ana", decision: "dismiss" })).toMatchObject({
      kind: "decided",
    });
    expect(await queue(input(later, 9))).toMatchObject({ kind: "queued", proposal: { thread_id: thread } });
  });

  it("runs outside any thread count against their creator's pending proposals outside threads: a run per call gains nothing", async () => {
    const limits = { ...LIMITS, pendingPerMemberOutsideThreads: 3 };
    const queueFor = (i: QueueProposalInput) => inTransaction(db.pool, (client) => queueProposal(client, i, limits));
    const as = (user: string) => ({ proposedBy: user });
    const queued = [];
    for (let n = 1; n <= 3; n++) queued.push(await queueFor(input(await newRun(null, "mo"), n, as("mo"))));
    expect(queued.map((q) => q.kind)).toEqual(["queued", "queued", "queued"]);
    expect(await queueFor(input(await newRun(null, "mo"), 4, as("mo")))).toEqual({ kind: "limit", limit: "member", max: 3 });
    // Another member, and mo's runs in a thread, have bounds of their own.
    expect(await queueFor(input(await newRun(null, "kit"), 5, as("kit")))).toMatchObject({ kind: "queued" });
    expect(await queueFor(input(await newRun(randomUUID(), "mo"), 6, as("mo")))).toMatchObject({ kind: "queued" });
    // Deciding one gives its place back.
    const one = queued[0].kind === "queued" ? queued[0].proposal.id : "";
    expect(await decideProposal(db.pool, { tenantId: "acme", proposalId: one, proposedBy: "mo", decidedBy: "mo", decision: "dismiss" })).toMatchObject({
      kind: "decided",
    });
    expect(await queueFor(input(await newRun(null, "mo"), 7, as("mo")))).toMatchObject({ kind: "queued" });
    // Two proposals from two runs raced for kit's last place: exactly one is queued.
    expect(await queueFor(input(await newRun(null, "kit"), 8, as("kit")))).toMatchObject({ kind: "queued" });
    const [a, b] = [await newRun(null, "kit"), await newRun(null, "kit")];
    const raced = await Promise.all([queueFor(input(a, 9, as("kit"))), queueFor(input(b, 10, as("kit")))]);
    expect(raced.map((r) => r.kind).sort()).toEqual(["limit", "queued"]);
  });

  it("of two concurrent proposals at the run's limit, exactly one is queued", async () => {
    for (let round = 0; round < 5; round++) {
      const run = await newRun(null);
      await queue(input(run, 1));
      const raced = await Promise.all([queue(input(run, 2)), queue(input(run, 3))]);
      expect(raced.map((r) => r.kind).sort()).toEqual(["limit", "queued"]);
      expect((await db.pool.query("SELECT count(*)::int AS n FROM knowledge_proposals WHERE run_id = $1", [run])).rows[0].n).toBe(2);
    }
  });

  it("of two concurrent proposals at the thread's limit (different runs), exactly one is queued", async () => {
    const thread = randomUUID();
    const filler = [await newRun(thread), await newRun(thread)];
    for (const [i, run] of [filler[0], filler[0], filler[1], filler[1]].entries()) await queue(input(run, i + 1));
    const [a, b] = [await newRun(thread), await newRun(thread)];
    const raced = await Promise.all([queue(input(a, 5)), queue(input(b, 6))]);
    expect(raced.map((r) => r.kind).sort()).toEqual(["limit", "queued"]);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM knowledge_proposals WHERE thread_id = $1 AND status = 'pending'", [thread])).rows[0].n).toBe(5);
  });

  it("refuses a run of another tenant (no run): nothing queued", async () => {
    const run = await newRun(null, "ana", "globex");
    expect(await queue(input(run, 1))).toEqual({ kind: "no_run" });
  });

  it("applies a proposal into a searchable document with its provenance; a second decision finds it decided", async () => {
    const thread = randomUUID();
    const run = await newRun(thread);
    const q = await queue(input(run, 4, { title: "Greenland shipping", content: "Parcels to Greenland travel by the weekly Nuuk ferry." }));
    if (q.kind !== "queued") throw new Error("queued");
    expect(await searchKnowledge(db.pool, "acme", "Greenland ferry")).toEqual([]);
    const applied = await decideProposal(db.pool, { tenantId: "acme", proposalId: q.proposal.id, proposedBy: "ana", decidedBy: "ana", decision: "apply" });
    if (applied.kind !== "decided") throw new Error("decided");
    expect(applied.proposal).toMatchObject({ status: "applied", decided_by: "ana", document_id: expect.any(String) });
    expect(applied.proposal.decided_at).toMatch(/Z$/);
    const doc = await readDocument(db.pool, "acme", applied.proposal.document_id!);
    expect(doc).toMatchObject({
      title: "Greenland shipping",
      body: "Parcels to Greenland travel by the weekly Nuuk ferry.",
      provenance: { thread_id: thread, run_id: run, step_no: 4, proposal_id: q.proposal.id },
    });
    expect((await searchKnowledge(db.pool, "acme", "Greenland ferry"))[0]).toMatchObject({ document_id: doc!.id });
    expect(
      await decideProposal(db.pool, { tenantId: "acme", proposalId: q.proposal.id, proposedBy: "ana", decidedBy: "ana", decision: "dismiss" }),
    ).toMatchObject({
      kind: "not_pending",
      proposal: { status: "applied" },
    });
  });

  it("decides race-free: of a concurrent apply and dismiss exactly one wins, and at most one document is made", async () => {
    const run = await newRun(null);
    const q = await queue(input(run, 1, { title: "Race", content: "Only one decision wins a race." }));
    if (q.kind !== "queued") throw new Error("queued");
    const decide = (decision: "apply" | "dismiss") =>
      decideProposal(db.pool, { tenantId: "acme", proposalId: q.proposal.id, proposedBy: null, decidedBy: "root", decision });
    const outcomes = await Promise.all([decide("apply"), decide("dismiss"), decide("apply")]);
    expect(outcomes.filter((o) => o.kind === "decided")).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === "not_pending")).toHaveLength(2);
    expect((await db.pool.query("SELECT count(*)::int AS n FROM kb_documents WHERE proposal_id = $1", [q.proposal.id])).rows[0].n).toBeLessThanOrEqual(1);
  });

  it("another user's proposal is not found for a caller limited to their own; the tenant scope lists it", async () => {
    const run = await newRun(null, "bob");
    const q = await queue(input(run, 1, { proposedBy: "bob" }));
    if (q.kind !== "queued") throw new Error("queued");
    expect(await decideProposal(db.pool, { tenantId: "acme", proposalId: q.proposal.id, proposedBy: "ana", decidedBy: "ana", decision: "apply" })).toEqual({
      kind: "not_found",
    });
    expect(await decideProposal(db.pool, { tenantId: "globex", proposalId: q.proposal.id, proposedBy: null, decidedBy: "x", decision: "apply" })).toEqual({
      kind: "not_found",
    });
    const own = await listProposals(db.pool, { tenantId: "acme", proposedBy: "ana" }, { page: 1, pageSize: 100 });
    expect(own.items.map((p) => p.id)).not.toContain(q.proposal.id);
    expect(own.items.every((p) => p.proposed_by === "ana")).toBe(true);
    const tenant = await listProposals(db.pool, { tenantId: "acme", proposedBy: null, status: "pending" }, { page: 1, pageSize: 100 });
    expect(tenant.items.map((p) => p.id)).toContain(q.proposal.id);
    expect(tenant.items.every((p) => p.status === "pending")).toBe(true);
    expect(tenant.total).toBe(tenant.items.length);
    expect(await findProposal(db.pool, "globex", q.proposal.id)).toBeNull();
    expect(await findProposal(db.pool, "acme", q.proposal.id)).toMatchObject({ id: q.proposal.id, proposed_by: "bob" });
  });
});
