import { bindGrpc, createLogger, createPool, grpc, shutdownGrpc, type Pool } from "@steward/platform";
import { createPolicyDecisionApi, DecideRequest, type PolicyDecisionApi } from "@steward/proto";
import { createPolicyGrpcServer } from "./server";
import { createDecisionHandler } from "../../app/decide-request";
import { createPgPolicyFacts } from "../pg/facts";
import { freshDatabase } from "../../../../../test/support/databases";

describe("policy gRPC server (PolicyDecision.Decide over a real database)", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  let server: grpc.Server;
  let api: PolicyDecisionApi;

  const ask = (
    principal: { tenantId: string; userId: string; roles?: string[]; rolesFromToken: boolean },
    action = "agent.run.create",
  ) =>
    api.decide(
      DecideRequest.fromPartial({
        principal: { roles: [], ...principal },
        action,
        resource: { type: "run", id: "" },
        context: { run_id: "00000000-0000-4000-8000-000000000000" },
      }),
      { deadlineMs: 5000 },
    );

  beforeAll(async () => {
    db = await freshDatabase("steward_policy_grpc");
    pool = createPool(db.url, { max: 4 });
    const logger = createLogger("policy", "silent");
    const handle = createDecisionHandler({ facts: createPgPolicyFacts(pool), logger });
    server = createPolicyGrpcServer({ handle, logger });
    const port = await bindGrpc(server, "127.0.0.1:0");
    expect(port).toBeGreaterThan(0);
    api = createPolicyDecisionApi(`127.0.0.1:${port}`);
  });

  afterAll(async () => {
    api?.close();
    if (server) await shutdownGrpc(server, 2000);
    await pool?.end();
    if (db) await db.drop();
  });

  it("permits a member agent.run.create and names the rule", async () => {
    const d = await ask({ tenantId: "acme", userId: "alice", roles: ["member"], rolesFromToken: true });
    expect(d.permit).toBe(true);
    expect(d.code).toBe("");
    expect(d.policyIds.length).toBeGreaterThan(0);
    expect(d.policyIds).toEqual(["role_actions/*/member/agent.run.create"]);
    expect(d.reasons.length).toBeGreaterThan(0);
  });

  it("denies a guest with 60500 and no policy ids", async () => {
    const d = await ask({ tenantId: "acme", userId: "alice", roles: ["guest"], rolesFromToken: true });
    expect(d.permit).toBe(false);
    expect(d.code).toBe("60500");
    expect(d.policyIds).toEqual([]);
    expect(d.reasons.length).toBeGreaterThan(0);
  });

  it("denies an action outside the catalogue even to an admin", async () => {
    const d = await ask({ tenantId: "acme", userId: "root", roles: ["admin"], rolesFromToken: true }, "system.shutdown");
    expect(d.permit).toBe(false);
    expect(d.code).toBe("60500");
  });

  it("reads the principal's current roles from memberships when rolesFromToken is false", async () => {
    // No membership yet: no role, denied — even though the request carries token roles, they are ignored.
    const before = await ask({ tenantId: "acme", userId: "bob", roles: ["member"], rolesFromToken: false });
    expect(before.permit).toBe(false);
    expect(before.code).toBe("60500");

    await pool.query("INSERT INTO memberships (tenant_id, user_id, roles) VALUES ('acme', 'bob', ARRAY['member'])");
    const permitted = await ask({ tenantId: "acme", userId: "bob", rolesFromToken: false });
    expect(permitted.permit).toBe(true);
    expect(permitted.policyIds).toEqual(["role_actions/*/member/agent.run.create"]);

    // The membership belongs to acme only.
    const otherTenant = await ask({ tenantId: "globex", userId: "bob", rolesFromToken: false });
    expect(otherTenant.permit).toBe(false);

    await pool.query("UPDATE memberships SET roles = ARRAY['guest'] WHERE tenant_id = 'acme' AND user_id = 'bob'");
    const denied = await ask({ tenantId: "acme", userId: "bob", rolesFromToken: false });
    expect(denied.permit).toBe(false);
    expect(denied.code).toBe("60500");
    expect(denied.policyIds).toEqual([]);
  });

  it("answers INVALID_ARGUMENT when the principal is missing", async () => {
    const call = api.decide(DecideRequest.fromPartial({ action: "agent.run.create", context: {} }), { deadlineMs: 5000 });
    await expect(call).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });

  it("answers INVALID_ARGUMENT when the user or the action is missing", async () => {
    await expect(
      api.decide(DecideRequest.fromPartial({ principal: { tenantId: "acme" }, action: "agent.run.create" }), { deadlineMs: 5000 }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(
      api.decide(DecideRequest.fromPartial({ principal: { tenantId: "acme", userId: "alice", roles: ["member"], rolesFromToken: true } }), {
        deadlineMs: 5000,
      }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });
});
