import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials as grpcCredentials, status as grpcStatus, type ChannelCredentials } from "@grpc/grpc-js";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import { busNames } from "@steward/contract";
import { addDocument } from "@steward/store";
import { createPolicyAdminApi, createPolicyDecisionApi, createToolExecApi, type ClientOptions } from "@steward/proto";
import { freshNamespace } from "../support/databases";
import { sqlStateOf } from "../support/sql-state";
import { subscriptionEnd } from "../support/subscription-end";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startSecuredNats, type NatsUser, type SecuredNats } from "../support/secured-nats";
import { openEventStream } from "../support/sse";
import { waitFor } from "../support/wait-for";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ensureDevPki } = require("../../infra/local/dev-pki.cjs") as {
  ensureDevPki(dir: string, names?: string[]): { env: Record<string, Record<string, string>> };
};

// The internal planes are closed: without credentials a local process must not activate a policy set for another
// tenant through the policy admin service, run save_note in another tenant through ToolExec.Invoke, or read
// every tenant's events off NATS. Here the platform runs as `npm start` runs it outside the test hooks: mutual
// TLS between the services, a NATS user per service on a nats-server of its own (Steward's generated
// configuration), a PostgreSQL role per service. The run goes through; every door tried is shut.

jest.setTimeout(180_000);

const LLM_API_KEY = "sk-runner-only-4f1c";

/**
 * The model: search the knowledge base once, then answer in a few streamed pieces — the first piece once a client
 * listens (deltas are live only: one sent before the client's stream is open is nobody's), the rest once released.
 */
let releaseAnswer: () => void = () => undefined;
let clientListening: Promise<void> = Promise.resolve();
function script(req: ChatRequest): Reply {
  if (!req.messages.some((m) => m.role === "tool")) {
    return { toolCalls: [{ id: "k1", name: "knowledge_search", arguments: JSON.stringify({ query: "refund" }) }] };
  }
  const held = new Promise<void>((resolve) => (releaseAnswer = resolve));
  return { text: "Refunds are possible within 30 days of purchase.", holdBeforeFirstChunk: clientListening, holdAfterFirstChunk: held };
}

/** The gRPC outcome of a call: "ok", or its status code. */
async function outcome(call: () => Promise<unknown>): Promise<"ok" | number> {
  try {
    await call();
    return "ok";
  } catch (err) {
    return (err as { code: number }).code;
  }
}

describe("internal planes: mutual TLS, a NATS user and a PostgreSQL role per service", () => {
  let nats: SecuredNats;
  let model: FakeOpenAi;
  let platform: TestPlatform;
  let owner: pg.Pool;
  let alice: string;
  let bob: string;
  let foreignDir: string;
  let foreignRunner: Record<string, string>;
  const namespace = freshNamespace("ip");
  const names = busNames(namespace);
  const connections: NatsConnection[] = [];

  const as = async (user: NatsUser) => {
    const nc = await nats.connectAs(user);
    connections.push(nc);
    return nc;
  };

  beforeAll(async () => {
    nats = await startSecuredNats(namespace);
    model = await startFakeOpenAi(script);
    foreignDir = mkdtempSync(join(tmpdir(), "steward-foreign-ca-"));
    foreignRunner = ensureDevPki(foreignDir, ["agent-runner"]).env["agent-runner"];
    const natsUser = (user: NatsUser) => ({ NATS_USER: user, NATS_PASSWORD: nats.passwords[user] });
    platform = await startTestPlatform(
      // No test hooks: the services run as they would outside the suites.
      { STEWARD_TEST_HOOKS: "0", LLM_BASE_URL: model.baseUrl, LLM_API_KEY, LLM_MODEL: "fake", STEWARD_OPERATOR_TENANT: "opsco" },
      {
        namespace,
        roles: true,
        nats: { url: nats.url, user: "operator", pass: nats.passwords.operator },
        perService: { gateway: natsUser("gateway"), "agent-runner": natsUser("agent-runner"), policy: natsUser("policy") },
      },
    );
    owner = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    await addDocument(owner, { tenantId: "acme", title: "Refund policy", body: "Customers may ask for a refund within 30 days of purchase." });
    alice = await platform.token({ tenant: "acme", user: "alice" });
    bob = await platform.token({ tenant: "globex", user: "bob" });
  });

  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    await owner?.end();
    await platform?.teardown();
    await model?.close();
    await nats?.stop();
    if (foreignDir) rmSync(foreignDir, { recursive: true, force: true });
  });

  /** Creates a run as `token`'s user and waits until it ends. */
  async function finishedRun(token: string): Promise<any> {
    const created = await platform.http("POST", "/v1/agents/runs", { token, body: { input: "How long for a refund?" } });
    expect(created.status).toBe(201);
    releaseAnswer();
    return waitFor(
      async () => {
        releaseAnswer();
        const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token });
        return ["succeeded", "failed", "cancelled"].includes(r.body.state) ? r.body : undefined;
      },
      { timeoutMs: 30_000, what: `run ${created.body.id} to end` },
    );
  }

  it("drives a run end to end: commands, events and token deltas on NATS, tools over mutual TLS, each service as its own role", async () => {
    let listening: () => void = () => undefined;
    clientListening = new Promise<void>((resolve) => (listening = resolve));
    const created = await platform.http("POST", "/v1/agents/runs", { token: alice, body: { input: "How long for a refund?" } });
    expect(created.status).toBe(201);
    // Token deltas reach the client only through the gateway's subscription on the deltas subject.
    const stream = await openEventStream(`${platform.gatewayUrl}/v1/agents/runs/${created.body.id}/events`, alice);
    listening();
    clientListening = Promise.resolve();
    try {
      await stream.until((messages) => messages.some((m) => m.event === "message.delta"), 30_000);
      releaseAnswer();
      await stream.until((messages) => messages.some((m) => m.event === "run.succeeded"), 30_000);
    } finally {
      stream.close();
    }
    const run = (await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token: alice })).body;
    expect(run.state).toBe("succeeded");
    expect(run.output.evidence.length).toBeGreaterThan(0);
    const decided = await owner.query("SELECT permit FROM policy_decisions WHERE run_id = $1 AND resource_id = 'knowledge_search'", [run.id]);
    expect(decided.rows).toEqual([{ permit: true }]);
    // Every event of the run reached the bus (the relays publish as their services' users).
    const stored = (await owner.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE stream_id = $1", [run.id])).rows[0].n;
    const jsm = await jetstreamManager(await platform.nats());
    const onBus = async () => {
      const info = await jsm.streams.info(names.eventStream, { subjects_filter: names.runEvents(run.id) });
      return Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
    };
    await waitFor(async () => ((await onBus()) === stored ? true : undefined), { what: `the run's ${stored} events on the bus` });
    // Each service is connected as its own role, none as the owner.
    const { rows } = await owner.query<{ application_name: string; usename: string }>(
      "SELECT DISTINCT application_name, usename FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'steward-%' ORDER BY 1",
    );
    const byService = Object.fromEntries(rows.map((r) => [r.application_name, r.usename]));
    expect(byService).toMatchObject({
      "steward-gateway": "steward_gateway",
      "steward-agent-runner": "steward_agent_runner",
      "steward-tool-exec": "steward_tool_exec",
      "steward-policy": "steward_policy",
    });
    // The status route asks every instance over NATS (answers through allow_responses) and reads the consumer.
    const admin = await platform.token({ tenant: "opsco", user: "root", roles: ["admin"] });
    const whole = await waitFor(
      async () => {
        const r = await platform.http("GET", "/v1/admin/status", { token: admin });
        return r.status === 200 && r.body.status === "ok" ? r.body : undefined;
      },
      { what: "the platform status to be ok" },
    );
    expect(whole.services.map((s: { service: string }) => s.service).sort()).toEqual(["agent-runner", "gateway", "policy"]);
    expect(whole.runners).toMatchObject({ attached: 1 });
    // Nothing the services do is refused by the server's permissions.
    expect(nats.log()).not.toMatch(/Violation/);
  });

  describe("gRPC", () => {
    const invoke =
      (options: ClientOptions, over: Partial<Record<string, string>> = {}) =>
      async () => {
        const api = createToolExecApi(platform.toolExecAddr, options);
        try {
          return await api.invoke(
            {
              runId: over.runId ?? randomUUID(),
              tenantId: over.tenantId ?? "acme",
              userId: over.userId ?? "alice",
              stepNo: 1,
              callId: "forged",
              toolName: over.toolName ?? "save_note",
              argumentsJson: over.argumentsJson ?? JSON.stringify({ title: "Forged", body: "written by a forged call" }),
              elevationSessionId: "",
              mcpSessionId: "",
              mcpMode: "",
            },
            { deadlineMs: 5000 },
          );
        } finally {
          api.close();
        }
      };
    const foreign = (): ChannelCredentials =>
      grpcCredentials.createSsl(
        readFileSync(platform.tlsFiles["agent-runner"].STEWARD_TLS_CA),
        readFileSync(foreignRunner.STEWARD_TLS_KEY),
        readFileSync(foreignRunner.STEWARD_TLS_CERT),
        { checkServerIdentity: () => undefined },
      );
    const notes = async () => (await owner.query<{ n: number }>("SELECT count(*)::int AS n FROM kb_documents WHERE title = 'Forged'")).rows[0].n;

    it("tool-exec serves the runner only: no certificate, a certificate of another CA, or another service's identity is refused", async () => {
      const run = await finishedRun(alice);
      const own = { runId: run.id };
      expect(await outcome(invoke({}, own))).toBe(grpcStatus.UNAVAILABLE);
      expect(await outcome(invoke({ credentials: foreign(), serverName: "tool-exec" }, own))).toBe(grpcStatus.UNAVAILABLE);
      for (const identity of ["gateway", "policy"] as const) {
        expect([identity, await outcome(invoke(platform.grpcOptions(identity, "tool-exec"), own))]).toEqual([identity, grpcStatus.PERMISSION_DENIED]);
      }
      expect(await notes()).toBe(0);
      // Listing the catalogue (MCP search_capabilities, docs/mcp.md) is open to the gateway as well, to nobody else.
      const list = (options: ClientOptions) => async () => {
        const api = createToolExecApi(platform.toolExecAddr, options);
        try {
          return await api.listTools({ deadlineMs: 5000 });
        } finally {
          api.close();
        }
      };
      expect(await outcome(list(platform.grpcOptions("gateway", "tool-exec")))).toBe("ok");
      expect(await outcome(list(platform.grpcOptions("policy", "tool-exec")))).toBe(grpcStatus.PERMISSION_DENIED);
      // The runner's identity, for its own run, in its own tenant: the call goes through (to the PDP).
      const permitted = invoke(platform.grpcOptions("agent-runner", "tool-exec"), {
        ...own,
        toolName: "knowledge_search",
        argumentsJson: JSON.stringify({ query: "refund" }),
      });
      expect(await outcome(permitted)).toBe("ok");
    });

    it("tool-exec refuses a forged Invoke: another tenant's run, another user's run, a made-up run; nothing runs and the PDP is not asked", async () => {
      const mine = await finishedRun(alice);
      const theirs = await finishedRun(bob);
      const runner = platform.grpcOptions("agent-runner", "tool-exec");
      const forged = [
        { runId: theirs.id, tenantId: "acme", userId: "alice" }, // globex's run, claimed for acme
        { runId: theirs.id, tenantId: "globex", userId: "alice" }, // globex's run, another user
        { runId: mine.id, tenantId: "globex", userId: "bob" }, // acme's run, claimed for globex
        { runId: randomUUID(), tenantId: "globex", userId: "bob" }, // no such run
        { runId: "not-a-run-id", tenantId: "acme", userId: "alice" },
      ];
      for (const call of forged) expect([call, await outcome(invoke(runner, call))]).toEqual([call, grpcStatus.PERMISSION_DENIED]);
      expect(await notes()).toBe(0);
      const asked = await owner.query("SELECT 1 FROM policy_decisions WHERE resource_id = 'save_note'");
      expect(asked.rowCount).toBe(0);
    });

    it("policy administration answers the gateway only; decisions the gateway and tool-exec; no certificate, no call", async () => {
      const permitAll = { tenantId: "globex", policies: "permit(principal, action, resource);", createdBy: "intruder" };
      for (const identity of ["agent-runner", "tool-exec"] as const) {
        const admin = createPolicyAdminApi(platform.policyAddr, platform.grpcOptions(identity, "policy"));
        try {
          expect([identity, await outcome(() => admin.uploadPolicySet(permitAll))]).toEqual([identity, grpcStatus.PERMISSION_DENIED]);
          expect([identity, await outcome(() => admin.activatePolicySet({ tenantId: "globex", version: 1, activatedBy: "intruder" }))]).toEqual([
            identity,
            grpcStatus.PERMISSION_DENIED,
          ]);
        } finally {
          admin.close();
        }
      }
      const plain = createPolicyAdminApi(platform.policyAddr);
      try {
        expect(await outcome(() => plain.uploadPolicySet(permitAll))).toBe(grpcStatus.UNAVAILABLE);
      } finally {
        plain.close();
      }
      const sets = await owner.query("SELECT 1 FROM policy_sets WHERE tenant_id = 'globex' AND created_by = 'intruder'");
      expect(sets.rowCount).toBe(0);
      // The runner never asks the PDP itself; the gateway may administer (its routes check the caller first).
      const pdp = createPolicyDecisionApi(platform.policyAddr, platform.grpcOptions("agent-runner", "policy"));
      const admin = createPolicyAdminApi(platform.policyAddr, platform.grpcOptions("gateway", "policy"));
      try {
        const ask = {
          principal: { tenantId: "acme", userId: "alice", roles: [], rolesFromToken: false },
          action: "knowledge.document.read",
          resource: { type: "tool", id: "x" },
          context: {},
        };
        expect(await outcome(() => pdp.decide(ask))).toBe(grpcStatus.PERMISSION_DENIED);
        expect(await outcome(() => admin.listPolicySets({ tenantId: "acme", beforeVersion: 0, limit: 10 }))).toBe("ok");
      } finally {
        pdp.close();
        admin.close();
      }
    });
  });

  describe("NATS", () => {
    /** Resolves with the first permission error the connection reports (a publish or a subscription refused). */
    const refusal = (nc: NatsConnection) =>
      (async () => {
        for await (const s of nc.status()) if (s.type === "error" && /Permissions Violation/.test(String(s.error?.message))) return String(s.error.message);
        return "closed";
      })();

    it("refuses a client without a user", async () => {
      await expect(nats.connectAs(null)).rejects.toThrow(/Authorization Violation/);
    });

    it("the runner cannot publish a command as the gateway, plainly or through JetStream", async () => {
      const operator = await as("operator");
      const jsm = await jetstreamManager(operator);
      const before = (await jsm.streams.info(names.commandStream)).state.messages;
      const heard: string[] = [];
      operator.subscribe(names.runRequested, { callback: (_err, m) => void heard.push(m.subject) });
      await operator.flush();
      const runner = await as("agent-runner");
      const refused = refusal(runner);
      const command = JSON.stringify({ run_id: randomUUID(), tenant_id: "globex", created_by: "bob" });
      runner.publish(names.runRequested, command);
      expect(await refused).toBe(`Permissions Violation for Publish to "${names.runRequested}"`);
      await expect(jetstream(runner).publish(names.runRequested, command, { timeout: 5000 })).rejects.toThrow(/Permissions Violation for Publish/);
      await operator.flush();
      expect(heard).toEqual([]);
      expect((await jsm.streams.info(names.commandStream)).state.messages).toBe(before);
    });

    it("nobody but the gateway subscribes to token deltas", async () => {
      const runner = await as("agent-runner");
      const gateway = await as("gateway");
      const subject = names.runDeltas(randomUUID());
      const got: string[] = [];
      gateway.subscribe(subject, { callback: (_err, m) => void got.push(m.string()) });
      await gateway.flush();
      for (const user of ["agent-runner", "policy", "tool-exec"] as const) {
        const nc = await as(user);
        const sub = nc.subscribe(names.runDeltas("*"));
        expect([user, await subscriptionEnd(sub)]).toEqual([user, `Permissions Violation for Subscription to "${names.runDeltas("*")}"`]);
      }
      runner.publish(subject, JSON.stringify({ text: "a delta" }));
      await waitFor(() => (got.length > 0 ? true : undefined), { what: "the gateway to hear the delta" });
      expect(got).toEqual([JSON.stringify({ text: "a delta" })]);
    });

    it("only the policy service announces a policy activation; tool-exec may do nothing on the bus", async () => {
      const subject = `${namespace}.steward.policy.activated`;
      const heard: string[] = [];
      const policy = await as("policy");
      policy.subscribe(subject, { callback: (_err, m) => void heard.push(m.string()) });
      await policy.flush();
      for (const user of ["gateway", "agent-runner", "tool-exec"] as const) {
        const nc = await as(user);
        const refused = refusal(nc);
        nc.publish(subject, JSON.stringify({ tenant_id: "globex", version: 99 }));
        expect([user, await refused]).toEqual([user, `Permissions Violation for Publish to "${subject}"`]);
      }
      const toolExec = await as("tool-exec");
      const refused = refusal(toolExec);
      toolExec.publish(names.runEvent(randomUUID(), "run.succeeded"), "{}");
      expect(await refused).toMatch(/Permissions Violation for Publish/);
      await policy.flush();
      expect(heard).toEqual([]);
      policy.publish(subject, JSON.stringify({ tenant_id: "acme", version: 1 }));
      await waitFor(() => (heard.length > 0 ? true : undefined), { what: "the policy service's own announcement" });
    });
  });

  describe("PostgreSQL", () => {
    /** The SQLSTATE of `sql` run as `service`'s role, or "ok". */
    const asRole = (service: string, sql: string) => sqlStateOf(platform.roleUrls[service], sql);

    it.each([
      ["agent-runner", "SELECT count(*) FROM policy_sets"],
      [
        "agent-runner",
        "INSERT INTO policy_sets (tenant_id, version, policies, policy_ids, status, created_by) VALUES ('globex', 99, 'permit(principal, action, resource);', '{}', 'active', 'x')",
      ],
      ["agent-runner", "SELECT count(*) FROM memberships"],
      ["agent-runner", "INSERT INTO tool_results (run_id, fingerprint, tool_name, result_code, result) VALUES (gen_random_uuid(), 'f', 't', 'ok', '{}')"],
      ["agent-runner", "SELECT count(*) FROM kb_documents"],
      ["gateway", "INSERT INTO tool_results (run_id, fingerprint, tool_name, result_code, result) VALUES (gen_random_uuid(), 'f', 't', 'ok', '{}')"],
      ["gateway", "SELECT count(*) FROM policy_decisions"],
      ["gateway", "UPDATE policy_sets SET status = 'active'"],
      [
        "gateway",
        "INSERT INTO policy_sets (tenant_id, version, policies, policy_ids, status, created_by) VALUES ('globex', 99, 'permit(principal, action, resource);', '{}', 'active', 'x')",
      ],
      ["gateway", "SELECT count(*) FROM elevation_sessions"],
      ["gateway", "DELETE FROM policy_decisions"],
      ["gateway", "DELETE FROM events"],
      ["tool-exec", "SELECT input FROM runs"],
      ["tool-exec", "UPDATE runs SET state = 'succeeded'"],
      ["tool-exec", "INSERT INTO outbox (subject, msg_id, payload) VALUES ('agent.run.requested', 'x', '{}')"],
      ["tool-exec", "SELECT count(*) FROM events"],
      ["policy", "SELECT count(*) FROM runs"],
      ["policy", "INSERT INTO outbox (subject, msg_id, payload) VALUES ('agent.run.requested', 'x', '{}')"],
      ["policy", "SELECT count(*) FROM kb_chunks"],
      ["policy", "DELETE FROM memberships"],
      ["gateway", "CREATE TABLE escape (x int)"],
      ["tool-exec", "CREATE TABLE escape (x int)"],
    ])("%s's role is refused: %s", async (service, sql) => {
      expect(await asRole(service, sql)).toBe("42501");
    });

    it("each role can do its own service's reads", async () => {
      expect(await asRole("tool-exec", "SELECT id, tenant_id, created_by FROM runs LIMIT 1")).toBe("ok");
      expect(await asRole("policy", "SELECT count(*) FROM policy_decisions")).toBe("ok");
      expect(await asRole("agent-runner", "SELECT count(*) FROM events")).toBe("ok");
      expect(await asRole("gateway", "SELECT count(*) FROM outbox")).toBe("ok");
      // Its route guard decides in process: it reads the active sets and writes (only writes) the decision log.
      expect(await asRole("gateway", "SELECT count(*) FROM policy_sets")).toBe("ok");
    });
  });

  it("each service process holds only its own secrets", async () => {
    const environ = (pid: number) =>
      Object.fromEntries(
        readFileSync(`/proc/${pid}/environ`, "utf8")
          .split("\0")
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
      );
    const procs = {
      gateway: environ(platform.services.gateway.child.pid!),
      "agent-runner": environ(platform.services.runner.child.pid!),
      "tool-exec": environ(platform.services.toolExec.child.pid!),
      policy: environ(platform.services.policy.child.pid!),
    };
    const holders = (name: string) =>
      Object.entries(procs)
        .filter(([, e]) => e[name] !== undefined)
        .map(([s]) => s);
    expect(holders("STEWARD_JWT_SECRET")).toEqual(["gateway"]);
    expect(holders("LLM_API_KEY")).toEqual(["agent-runner"]);
    expect(holders("NATS_PASSWORD")).toEqual(["gateway", "agent-runner", "policy"]);
    for (const [service, e] of Object.entries(procs)) {
      expect([service, e.STEWARD_TLS_KEY]).toEqual([service, platform.tlsFiles[service].STEWARD_TLS_KEY]);
      expect([service, e.DATABASE_URL]).toEqual([service, platform.roleUrls[service]]);
      if (e.NATS_PASSWORD) expect([service, e.NATS_USER, e.NATS_PASSWORD]).toEqual([service, service, nats.passwords[service as NatsUser]]);
    }
  });
});
