import { randomBytes } from "node:crypto";
import { sampleValue } from "@steward/platform";
import { startTestPlatform, type RunningService, type TestPlatform } from "../support/platform";
import { eventsOf, runToEnd } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

/** `/metrics` of a service, from the ops port its "listening" line named. */
async function scrape(service: RunningService): Promise<string> {
  if (!service.health) throw new Error("the service named no health/ops URL");
  const res = await fetch(`${service.health}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** Scrapes until `holds(text)`, bounded; returns that scrape. */
function scrapeUntil(service: RunningService, what: string, holds: (text: string) => boolean): Promise<string> {
  return waitFor(
    async () => {
      const text = await scrape(service);
      return holds(text) ? text : undefined;
    },
    { timeoutMs: 15_000, what },
  );
}

/**
 * Every service serves Prometheus `/metrics` on its ops (health) port, the gateway too (never
 * on its public port); one run with a tool call moves every service's series, and no tenant, user or run id is
 * ever a label.
 */
describe("metrics on every service's ops port", () => {
  let platform: TestPlatform;
  const tenant = `mt-${randomBytes(5).toString("hex")}`;
  const user = `mu-${randomBytes(5).toString("hex")}`;

  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => platform?.teardown());

  it("counts a run with a tool call in the runner, tool-exec and policy, and labels no identity", async () => {
    const token = await platform.token({ tenant, user });
    // The scripted demo model searches the knowledge base once, then answers.
    const run = await runToEnd(platform, token, "How long do I have to ask for a refund?");
    expect(run.state).toBe("succeeded");
    const tools = (await eventsOf(platform, token, run.id)).filter((e) => e.type === "tool_result");
    expect(tools.map((e) => [e.data.tool_name, e.data.result_code])).toEqual([["knowledge_search", "ok"]]);

    const { runner, toolExec, policy, gateway } = platform.services;
    const runnerText = await scrapeUntil(
      runner,
      "the runner to count the run",
      (t) => (sampleValue(t, "steward_runs_finished_total", { state: "succeeded", code: "none" }) ?? 0) >= 1,
    );
    expect(sampleValue(runnerText, "steward_runner_tool_call_duration_seconds_count", { tool: "knowledge_search", result: "ok" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(runnerText, "steward_model_call_duration_seconds_count", { profile: "scripted", outcome: "ok" })).toBeGreaterThanOrEqual(2);
    expect(sampleValue(runnerText, "steward_run_step_duration_seconds_count")).toBeGreaterThanOrEqual(2);
    expect(sampleValue(runnerText, "steward_breaker_state", { breaker: "tool-exec", state: "closed" })).toBe(1);
    expect(sampleValue(runnerText, "steward_pg_pool_clients", { pool: "main", state: "total" })).toBeGreaterThanOrEqual(1);
    // Polled gauges: present once PostgreSQL and JetStream answered.
    expect(sampleValue(runnerText, "steward_outbox_backlog_messages")).toBeGreaterThanOrEqual(0);
    expect(sampleValue(runnerText, "steward_consumer_pending_messages", { consumer: "agent-runner", kind: "pending" })).toBeGreaterThanOrEqual(0);
    expect(sampleValue(runnerText, "steward_nodejs_eventloop_lag_seconds", { service: "agent-runner" })).toBeGreaterThanOrEqual(0);

    const toolText = await scrapeUntil(
      toolExec,
      "tool-exec to time the call",
      (t) => (sampleValue(t, "steward_tool_call_duration_seconds_count", { tool: "knowledge_search", result: "ok" }) ?? 0) >= 1,
    );
    expect(sampleValue(toolText, "steward_pdp_ask_duration_seconds_count", { effect: "permit" })).toBeGreaterThanOrEqual(1);
    for (const pool of ["main", "locks"]) expect(sampleValue(toolText, "steward_pg_pool_clients", { pool, state: "total" })).toBeGreaterThanOrEqual(1);

    const policyText = await scrapeUntil(
      policy,
      "policy to count the permits",
      (t) => (sampleValue(t, "steward_policy_decisions_total", { effect: "permit", code: "none" }) ?? 0) >= 1,
    );
    expect(sampleValue(policyText, "steward_policy_decision_duration_seconds_count", { effect: "permit" })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(policyText, "steward_pg_pool_clients", { pool: "main", state: "idle" })).toBeGreaterThanOrEqual(0);

    const gatewayText = await scrapeUntil(
      gateway,
      "the gateway to time the POST",
      (t) => (sampleValue(t, "steward_http_request_duration_seconds_count", { method: "POST", route: "/v1/agents/runs", status_class: "2xx" }) ?? 0) >= 1,
    );
    expect(sampleValue(gatewayText, "steward_sse_streams_open")).toBe(0);
    expect(sampleValue(gatewayText, "steward_pg_pool_clients", { pool: "main", state: "total" })).toBeGreaterThanOrEqual(1);
    expect((await platform.http("GET", "/metrics")).status).toBe(404);

    // Neither a label nor anywhere else in the text: the tenant, the user, the run.
    for (const [name, text] of [
      ["agent-runner", runnerText],
      ["tool-exec", toolText],
      ["policy", policyText],
      ["gateway", gatewayText],
    ]) {
      for (const identity of [tenant, user, run.id]) expect({ service: name, leaks: text.includes(identity) }).toEqual({ service: name, leaks: false });
    }
  });
});
