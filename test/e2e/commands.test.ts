import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@steward/contract";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { readSubject } from "../support/bus";
import { waitFor } from "../support/wait-for";

jest.setTimeout(120_000);

describe("commands: idempotent creation and poison messages", () => {
  let platform: TestPlatform;
  let token: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    token = await platform.token({ tenant: "initech", user: "peter" });
  });

  afterAll(async () => {
    await platform?.teardown();
  });

  async function finished(id: string) {
    return waitFor(async () => {
      const r = await platform.http("GET", `/v1/agents/runs/${id}`, { token });
      return ["succeeded", "failed"].includes(r.body.state) ? r.body : undefined;
    });
  }

  it("returns the original run for a retried POST with the same Idempotency-Key", async () => {
    const headers = { "idempotency-key": "retry-1" };
    const first = await platform.http("POST", "/v1/agents/runs", { token, headers, body: { input: "TPS reports?" } });
    const again = await platform.http("POST", "/v1/agents/runs", { token, headers, body: { input: "TPS reports?" } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const list = await platform.http("GET", "/v1/agents/runs", { token });
    expect(list.body.total).toBe(1);
    const other = await platform.http("POST", "/v1/agents/runs", { token, headers, body: { input: "something else" } });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe(10430);
    const someoneElse = await platform.token({ tenant: "initech", user: "michael" });
    const theirs = await platform.http("POST", "/v1/agents/runs", { token: someoneElse, headers, body: { input: "TPS reports?" } });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(first.body.id);
    expect((await finished(first.body.id)).state).toBe("succeeded");
  });

  it("dead-letters a poison run command with its reason, terminates it, and keeps serving other runs", async () => {
    const names = busNames(platform.namespace);
    const nc = await platform.nats();
    const poison = JSON.stringify({ run_id: "00000000-0000-4000-8000-000000000001", tenant_id: "initech", created_by: "x", roles: ["admin"] });
    await jetstream(nc).publish(names.runRequested, poison);
    const dead = await waitFor(async () => {
      const msgs = await readSubject(nc, names.deadLetterStream, names.deadLetterRunRequested);
      return msgs.length > 0 ? msgs : undefined;
    });
    expect(dead).toHaveLength(1);
    expect(dead[0].headers["Steward-Dead-Letter-Reason"]).toMatch(/roles|additional/i);
    expect(dead[0].json).toEqual(JSON.parse(poison));

    const jsm = await jetstreamManager(nc);
    let last: unknown;
    const consumer = await waitFor(
      async () => {
        const info = await jsm.consumers.info(names.commandStream, names.runnerConsumer);
        last = info; // shown if the wait fails
        return info.num_ack_pending === 0 && info.num_pending === 0 ? info : undefined;
      },
      { timeoutMs: 10_000, what: "the runner to settle the poison message" },
    ).catch((err) => {
      throw new Error(`${err.message}: ${JSON.stringify(last)}`);
    });
    expect(consumer.num_redelivered).toBe(0);

    const next = await platform.http("POST", "/v1/agents/runs", { token, body: { input: "stapler location?" } });
    expect((await finished(next.body.id)).state).toBe("succeeded");
    const stillDead = await readSubject(nc, names.deadLetterStream, names.deadLetterRunRequested);
    expect(stillDead).toHaveLength(1);
  });
});
