import { createLogger, createPool, type Pool } from "@steward/platform";
import { createPdp, defaultPolicyDir } from "@steward/pdp";
import type { PolicyDecisionApi } from "@steward/proto";
import { createGatewayDecisions } from "./gateway-decisions";
import { freshDatabase } from "../../../../test/support/databases";

type Asked = Parameters<PolicyDecisionApi["decide"]>[0];

/** The policy service as the gateway sees it over gRPC, recording what it is asked (the e2e suite asks the real one). */
function recordingPolicyService(answer: { permit: boolean; code: string }): PolicyDecisionApi & { asked: Asked[] } {
  const asked: Asked[] = [];
  return {
    asked,
    decide: async (req: Asked) => {
      asked.push(req);
      return { ...answer, reasons: [], policyIds: [], policyVersion: 1 };
    },
    state: () => 2,
    close: () => undefined,
  } as unknown as PolicyDecisionApi & { asked: Asked[] };
}

const route = (tenantId: string, userId: string) => ({
  tenantId,
  userId,
  tokenRoles: ["member"],
  action: "agent.run.read",
  resource: { type: "run", id: "" },
  context: {},
});

/**
 * The gateway decides its own policy points in process (docs/policy.md, "Where decisions are made") with the
 * policy service's PDP, over real PostgreSQL: the same record before the answer, and the policy service asked only
 * for a tenant without a set.
 */
describe("gateway decisions: in process, the same records, the policy service for a tenant without a set", () => {
  let db: { url: string; drop(): Promise<void> };
  let pool: Pool;
  const logger = createLogger("gateway-test", "silent");

  beforeAll(async () => {
    db = await freshDatabase("steward_gateway_decisions");
    pool = createPool(db.url, { max: 4 });
    // The policy service's own PDP installs acme's default set, as its first decision for acme would.
    const service = createPdp({ pool, policyDir: defaultPolicyDir, logger });
    await service.sets.get("acme");
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  const guard = () => createPdp({ pool, policyDir: defaultPolicyDir, logger }, { installsDefault: false });

  it("decides a tenant with a set itself, the record committed before the answer, the policy service not asked", async () => {
    const policyService = recordingPolicyService({ permit: false, code: "60500" });
    const decide = createGatewayDecisions({ pdp: guard(), policyService });
    const before = (await pool.query("SELECT coalesce(max(id), 0) AS id FROM policy_decisions")).rows[0].id;
    const permitted = await decide(route("acme", "mia"));
    const { rows } = await pool.query("SELECT tenant_id, user_id, action, permit, code, policy_version FROM policy_decisions WHERE id > $1", [before]);
    expect(permitted).toEqual({ permit: true, code: "" });
    expect(rows).toEqual([{ tenant_id: "acme", user_id: "mia", action: "agent.run.read", permit: true, code: "", policy_version: 1 }]);
    expect(policyService.asked).toEqual([]);
    // A deny is recorded as well: a user seen before without a role is not widened by the token's roles.
    await pool.query("UPDATE memberships SET roles = '{}' WHERE tenant_id = 'acme' AND user_id = 'mia'");
    expect(await decide(route("acme", "mia"))).toEqual({ permit: false, code: "60500" });
    const denied = await pool.query("SELECT permit, code FROM policy_decisions WHERE id > $1 ORDER BY id", [before]);
    expect(denied.rows).toEqual([
      { permit: true, code: "" },
      { permit: false, code: "60500" },
    ]);
  });

  it("asks the policy service for a tenant without any set, with the token's roles, and installs nothing itself", async () => {
    const policyService = recordingPolicyService({ permit: true, code: "" });
    const decide = createGatewayDecisions({ pdp: guard(), policyService });
    expect(await decide(route("newco", "ned"), { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" })).toEqual({ permit: true, code: "" });
    expect(policyService.asked).toEqual([
      {
        principal: { tenantId: "newco", userId: "ned", roles: ["member"], rolesFromToken: true },
        action: "agent.run.read",
        resource: { type: "run", id: "" },
        context: {},
      },
    ]);
    const { rows } = await pool.query("SELECT count(*)::int AS sets FROM policy_sets WHERE tenant_id = 'newco'");
    expect(rows[0].sets).toBe(0);
  });

  it("rejects when the decision cannot be made (PostgreSQL away), without asking the policy service", async () => {
    const policyService = recordingPolicyService({ permit: true, code: "" });
    const away = createPool("postgres://postgres@127.0.0.1:1/none", { max: 1 });
    const decide = createGatewayDecisions({ pdp: createPdp({ pool: away, policyDir: defaultPolicyDir, logger }, { installsDefault: false }), policyService });
    await expect(decide(route("acme", "mia"))).rejects.toThrow();
    expect(policyService.asked).toEqual([]);
    await away.end();
  });
});
