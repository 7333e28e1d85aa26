import { spawnSync } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import { addDocument } from "@steward/store";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

const dist = join(__dirname, "..", "..", "services", "agent-runner", "dist");
const RUNS = 20;

describe("replay and projection rebuild, as commands against a real store", () => {
  let platform: TestPlatform;
  let pool: pg.Pool;
  let alice: string;
  const runIds: string[] = [];

  /** Runs one of the agent-runner's commands as a real process on the platform's database. */
  const command = (script: string, args: string[] = []) =>
    spawnSync(process.execPath, [join(dist, script), ...args], {
      env: { ...process.env, DATABASE_URL: platform.databaseUrl },
      encoding: "utf8",
      timeout: 60_000,
    });

  /** The runs as the API shows them; `damaged` when the test broke the projection on purpose (its answers cannot fit the document). */
  const snapshots = (damaged?: "damaged") =>
    Promise.all(
      runIds.map(
        async (id) =>
          (
            await platform.http("GET", `/v1/agents/runs/${id}`, {
              token: alice,
              ...(damaged ? { unchecked: "the runs projection is damaged on purpose" } : {}),
            })
          ).body,
      ),
    );

  beforeAll(async () => {
    platform = await startTestPlatform();
    pool = new pg.Pool({ connectionString: platform.databaseUrl });
    await addDocument(pool, {
      tenantId: "acme",
      title: "Refund policy",
      body: "Customers may ask for a refund within 30 days of purchase. Refunds go back to the original card.",
    });
    alice = await platform.token({ tenant: "acme", user: "alice" });
    for (let i = 0; i < RUNS; i++) {
      const created = await platform.http("POST", "/v1/agents/runs", {
        token: alice,
        body: { input: `How long do I have to ask for a refund? (${i})` },
        headers: { "Idempotency-Key": `replay-${i}` },
      });
      expect(created.status).toBe(201);
      runIds.push(created.body.id);
    }
    await waitFor(
      async () => {
        const all = await snapshots();
        return all.every((s) => s.state === "succeeded" || s.state === "failed") ? all : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, what: `${RUNS} runs to finish` },
    );
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
  });

  it("replays every finished run from its events alone and reaches the same final state", async () => {
    expect((await snapshots()).map((s) => s.state)).toEqual(runIds.map(() => "succeeded"));

    const result = command("replay.js", ["--all-finished"]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const lines = result.stdout.trim().split("\n");
    const verdicts = lines.filter((l) => / same$/.test(l));
    expect(verdicts).toHaveLength(RUNS);
    expect(verdicts.map((l) => l.split(" ")[0]).sort()).toEqual([...runIds].sort());
    expect(verdicts.every((l) => l.split(" ")[1] === "succeeded")).toBe(true);
    expect(lines[lines.length - 1]).toBe(`${RUNS} runs replayed: ${RUNS} same, 0 diverged, 0 unfinished, 0 missing`);

    const one = command("replay.js", [runIds[0], "00000000-0000-4000-8000-000000000000"]);
    expect(one.status).toBe(1);
    expect(one.stdout).toContain(`${runIds[0]} succeeded same\n00000000-0000-4000-8000-000000000000 missing\n`);
    expect(command("replay.js", []).status).toBe(2);
    expect(command("replay.js", ["--all-finished", "--limit", "zero"]).status).toBe(2);
    expect(command("replay.js", ["not-a-run"]).status).toBe(2);
  });

  it("rebuilds a corrupted runs projection from the event store, keeping the request columns", async () => {
    const before = await snapshots();
    const requestColumns = async () =>
      (await pool.query("SELECT id, idempotency_key, request_hash, last_requested_at FROM runs WHERE id = ANY($1::uuid[]) ORDER BY id", [runIds])).rows;
    const columnsBefore = await requestColumns();
    expect(columnsBefore.every((r) => r.idempotency_key && r.request_hash)).toBe(true);

    await pool.query("UPDATE runs SET state = 'queued', output = NULL, finished_at = NULL, usage = '{}'::jsonb");
    const corrupted = await snapshots("damaged");
    expect(corrupted.every((s) => s.state === "queued" && s.output === null)).toBe(true);

    const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events");
    const result = command("rebuild-projection.js");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`rebuilt the runs projection: ${RUNS} runs from ${rows[0].n} events\n`);

    const after = await snapshots();
    expect(after).toEqual(before);
    expect(after.every((s) => s.state === "succeeded" && s.output.text.length > 0)).toBe(true);
    expect(await requestColumns()).toEqual(columnsBefore);
    // A retried create still finds its run by the key the rebuild kept.
    const retried = await platform.http("POST", "/v1/agents/runs", {
      token: alice,
      body: { input: "How long do I have to ask for a refund? (0)" },
      headers: { "Idempotency-Key": "replay-0" },
    });
    expect(retried.body.id).toBe(runIds[0]);
  });
});
