import { bindGrpc, connectNats, createLogger, createPool, grpc, shutdownGrpc, type NatsConnection, type Pool } from "@steward/platform";
import { createPolicyAdminApi, createPolicyDecisionApi, DecideRequest, type PolicyAdminApi, type PolicyDecisionApi } from "@steward/proto";
import { deferredActivations, defaultPolicyDir } from "@steward/pdp";
import { composePolicyService } from "../../compose";
import { freshDatabase, freshNamespace, natsUrl } from "../../../../../test/support/databases";
import { waitFor } from "../../../../../test/support/wait-for";

/** Run actions apply to runs; the others (knowledge, dataset) to tools. */
const resourceFor = (action: string) => (action.startsWith("agent.run.") ? { type: "run", id: "" } : { type: "tool", id: "some_tool" });

interface Replica {
  server: grpc.Server;
  close(): void;
  pdp: PolicyDecisionApi;
  admin: PolicyAdminApi;
}

describe("the policy service over gRPC: Cedar PDP, administration, decision log, replicas", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let nc: NatsConnection;
  const replicas: Replica[] = [];
  const namespace = freshNamespace("p");

  async function startReplica(): Promise<Replica> {
    const service = composePolicyService({
      pool,
      activations: deferredAttached(nc, namespace),
      policyDir: defaultPolicyDir,
      logger: createLogger("policy", "silent"),
    });
    const port = await bindGrpc(service.server, "127.0.0.1:0");
    const replica = { ...service, pdp: createPolicyDecisionApi(`127.0.0.1:${port}`), admin: createPolicyAdminApi(`127.0.0.1:${port}`) };
    replicas.push(replica);
    return replica;
  }

  const ask = (
    r: Replica,
    principal: { tenantId: string; userId: string; roles?: string[]; rolesFromToken: boolean },
    action = "agent.run.create",
    context: Record<string, string> = {},
  ) =>
    r.pdp.decide(DecideRequest.fromPartial({ principal: { roles: [], ...principal }, action, resource: resourceFor(action), context }), { deadlineMs: 5000 });

  beforeAll(async () => {
    db = await freshDatabase("steward_policy_grpc");
    pool = createPool(db.url, { max: 6 });
    nc = await connectNats(natsUrl, "policy-test");
    await startReplica();
    await startReplica();
  });

  afterAll(async () => {
    for (const r of replicas) {
      r.pdp.close();
      r.admin.close();
      r.close();
      await shutdownGrpc(r.server, 2000);
    }
    await nc?.close();
    await pool?.end();
    if (db) await db.drop();
  });

  it("installs the default set for a new tenant and permits a member by the named policy", async () => {
    const d = await ask(replicas[0], { tenantId: "acme", userId: "alice", roles: ["member"], rolesFromToken: true });
    expect(d).toMatchObject({ permit: true, code: "", policyIds: ["member-runs"] });
    const sets = await replicas[0].admin.listPolicySets({ tenantId: "acme", beforeVersion: 0, limit: 10 });
    expect(sets.sets.map((s) => [s.version, s.status])).toEqual([[1, "active"]]);
  });

  it("denies a guest with 60500, and an action outside the catalogue even to an admin", async () => {
    expect(await ask(replicas[0], { tenantId: "acme", userId: "g", roles: ["guest"], rolesFromToken: true })).toMatchObject({ permit: false, code: "60500" });
    expect(await ask(replicas[0], { tenantId: "acme", userId: "root", roles: ["admin"], rolesFromToken: true }, "system.shutdown")).toMatchObject({
      permit: false,
      code: "60500",
    });
  });

  it("reads the principal's current roles at decision time when the caller has no token", async () => {
    const bob = { tenantId: "acme", userId: "bob", roles: ["admin"], rolesFromToken: false };
    expect((await ask(replicas[0], bob)).permit).toBe(false); // no membership: the request's roles are ignored
    await pool.query("INSERT INTO memberships (tenant_id, user_id, roles) VALUES ('acme', 'bob', ARRAY['member'])");
    expect((await ask(replicas[0], bob)).permit).toBe(true);
    await pool.query("UPDATE memberships SET roles = ARRAY['guest'] WHERE user_id = 'bob'");
    expect((await ask(replicas[0], bob)).permit).toBe(false);
  });

  it("records every decision durably with the deciding policy ids", async () => {
    const runId = "00000000-0000-4000-8000-0000000000aa";
    await ask(replicas[1], { tenantId: "acme", userId: "alice", roles: ["member"], rolesFromToken: true }, "knowledge.document.read", {
      run_id: runId,
      step_no: "2",
      fingerprint: "f".repeat(64),
    });
    const { decisions } = await replicas[0].admin.queryDecisions({ tenantId: "acme", runId, limit: 10, afterId: 0, mcpSessionId: "" });
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ permit: true, action: "knowledge.document.read", stepNo: 2, policyIds: ["member-knowledge-read"], policyVersion: 1 });
    expect(decisions[0].latencyMs).toBeGreaterThan(0);
  });

  it("refuses to store a set that does not validate, with the reason", async () => {
    const bad = replicas[0].admin.uploadPolicySet({
      tenantId: "acme",
      policies: '@id("x")\npermit (principal, action == Steward::Action::"nope", resource);',
      createdBy: "root",
    });
    await expect(bad).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: expect.stringContaining("nope") });
    expect((await replicas[0].admin.listPolicySets({ tenantId: "acme", beforeVersion: 0, limit: 10 })).sets).toHaveLength(1);
  });

  it("dry-runs a draft, then activation reaches every replica at once", async () => {
    const strict = `@id("admins-only")\npermit (principal in Steward::Role::"admin", action, resource);`;
    const draft = await replicas[0].admin.uploadPolicySet({ tenantId: "acme", policies: strict, createdBy: "root" });
    expect(draft).toMatchObject({ version: 2, status: "draft", policyIds: ["admins-only"] });
    const dry = await replicas[0].admin.dryRun({
      tenantId: "acme",
      version: 2,
      userId: "alice",
      roles: ["member"],
      action: "agent.run.create",
      resourceType: "run",
      resourceId: "",
      elevated: false,
    });
    expect(dry).toMatchObject({ permit: false, code: "60500", version: 2 });
    const alice = { tenantId: "acme", userId: "alice", roles: ["member"], rolesFromToken: true };
    expect((await ask(replicas[1], alice)).permit).toBe(true); // replica 1 caches version 1
    await replicas[0].admin.activatePolicySet({ tenantId: "acme", version: 2, activatedBy: "root" });
    const denied = await waitFor(
      async () => {
        const d = await ask(replicas[1], alice);
        return d.permit ? undefined : d;
      },
      { timeoutMs: 10_000, what: "replica 1 to see the activation" },
    );
    expect(denied.code).toBe("60500");
    const { decisions } = await replicas[0].admin.queryDecisions({ tenantId: "acme", runId: "", limit: 1000, afterId: 0, mcpSessionId: "" });
    expect(decisions[decisions.length - 1].policyVersion).toBe(2);
  });

  it("an evaluation error denies with 60503 naming the erroring policy, forbid or permit; the log and the dry run show it", async () => {
    const overflow = "when { context.step_no + 9223372036854775807 + 1 > 0 }";
    const defaults = (await replicas[0].admin.getPolicySet({ tenantId: "acme", version: 1 })).policies;
    const policies = [
      defaults,
      `@id("overflowing-forbid")\nforbid (principal, action == Steward::Action::"agent.run.read", resource) ${overflow};`,
      `@id("overflowing-permit")\npermit (principal, action == Steward::Action::"agent.run.create", resource) ${overflow};`,
    ].join("\n");
    const alice = { tenantId: "initech", userId: "alice", roles: ["member"], rolesFromToken: true };
    expect((await ask(replicas[0], alice, "agent.run.read")).permit).toBe(true); // installs the default set
    const v2 = await replicas[0].admin.uploadPolicySet({ tenantId: "initech", policies, createdBy: "root" });
    await replicas[0].admin.activatePolicySet({ tenantId: "initech", version: v2.version, activatedBy: "root" });
    const runId = "00000000-0000-4000-8000-0000000000bb";
    // member-runs permits both actions; Cedar alone would skip the erroring policy and allow.
    expect(await ask(replicas[0], alice, "agent.run.read", { run_id: runId })).toEqual({
      permit: false,
      code: "60503",
      reasons: ["policy evaluation error in overflowing-forbid"],
      policyIds: ["overflowing-forbid"],
    });
    expect(await ask(replicas[0], alice, "agent.run.create", { run_id: runId })).toMatchObject({
      permit: false,
      code: "60503",
      policyIds: ["overflowing-permit"],
    });
    const { decisions } = await replicas[0].admin.queryDecisions({ tenantId: "initech", runId, limit: 10, afterId: 0, mcpSessionId: "" });
    expect(decisions.map((d) => [d.action, d.permit, d.code, d.policyIds, d.policyVersion])).toEqual([
      ["agent.run.read", false, "60503", ["overflowing-forbid"], v2.version],
      ["agent.run.create", false, "60503", ["overflowing-permit"], v2.version],
    ]);
    const dry = await replicas[0].admin.dryRun({
      tenantId: "initech",
      version: v2.version,
      userId: "alice",
      roles: ["member"],
      action: "agent.run.read",
      resourceType: "run",
      resourceId: "",
      elevated: false,
    });
    expect(dry).toMatchObject({ permit: false, code: "60503", policyIds: ["overflowing-forbid"], version: v2.version });
    expect(dry.errors).toEqual([expect.stringMatching(/^overflowing-forbid: .*overflow/)]);
  });

  it("an elevation session grants its actions until it is revoked (60501) or expires", async () => {
    const carol = { tenantId: "globex", userId: "carol", roles: ["member"], rolesFromToken: true };
    const plain = await ask(replicas[0], carol, "knowledge.document.write");
    expect(plain).toMatchObject({ permit: false, code: "60500" });
    const session = await replicas[0].admin.createElevation({
      tenantId: "globex",
      userId: "carol",
      actions: ["knowledge.document.write"],
      ttlSeconds: 600,
      grantedBy: "root",
    });
    const ctx = { elevation_session_id: session.id };
    expect(await ask(replicas[1], carol, "knowledge.document.write", ctx)).toMatchObject({ permit: true, policyIds: ["elevation-grants"] });
    expect(await ask(replicas[1], { ...carol, userId: "mallory" }, "knowledge.document.write", ctx)).toMatchObject({ permit: false, code: "60501" });
    await replicas[0].admin.revokeElevation({ tenantId: "globex", id: session.id });
    expect(await ask(replicas[1], carol, "knowledge.document.write", ctx)).toMatchObject({ permit: false, code: "60501" });
    await pool.query("UPDATE elevation_sessions SET revoked_at = NULL, expires_at = clock_timestamp() - interval '1 second' WHERE id = $1", [session.id]);
    const expired = await ask(replicas[1], carol, "knowledge.document.write", ctx);
    expect(expired).toMatchObject({ permit: false, code: "60501" });
    expect(expired.reasons[0]).toContain("expired");
  });

  it("answers INVALID_ARGUMENT when the principal or the action is missing", async () => {
    await expect(replicas[0].pdp.decide(DecideRequest.fromPartial({ action: "agent.run.create" }), { deadlineMs: 5000 })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
    await expect(
      replicas[0].pdp.decide(DecideRequest.fromPartial({ principal: { tenantId: "acme", userId: "a" } }), { deadlineMs: 5000 }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });
});

function deferredAttached(nc: Parameters<ReturnType<typeof deferredActivations>["attach"]>[0], namespace: string) {
  const activations = deferredActivations(namespace, () => undefined);
  activations.attach(nc);
  return activations;
}
