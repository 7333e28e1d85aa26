import { createReadiness } from "../health/readiness";
import { serveHealth, type HealthServer } from "../health/serve";
import { metricCatalog } from "./catalog";
import { breakerGauge } from "./breaker-gauge";
import { parseExposition } from "./exposition";
import { watchPools } from "./pg-pool";
import { createMetrics } from "./registry";

/** The value of one series, written as in exposition text (`name{a="1",b="2"}`), whatever the label order. */
function valueOf(text: string, series: string): number | undefined {
  const [sample] = parseExposition(series + " 0");
  const found = parseExposition(text).filter(
    (s) =>
      s.name === sample.name &&
      Object.keys(s.labels).length === Object.keys(sample.labels).length &&
      Object.entries(sample.labels).every(([k, v]) => s.labels[k] === v),
  );
  return found.length === 1 ? found[0].value : undefined;
}

describe("a process's metrics", () => {
  it("labels every series with the service and bounds label values", async () => {
    const metrics = createMetrics("policy", { defaults: false });
    const decisions = metrics.counter(metricCatalog.policyDecisions);
    decisions.inc({ effect: "permit", code: "none" });
    decisions.inc({ effect: "deny", code: "60500" }, 2);
    decisions.inc({ effect: "maybe", code: "tenant-acme" });
    const text = await metrics.text();
    expect(valueOf(text, 'steward_policy_decisions_total{effect="permit",code="none",service="policy"}')).toBe(1);
    expect(valueOf(text, 'steward_policy_decisions_total{effect="deny",code="60500",service="policy"}')).toBe(2);
    expect(valueOf(text, 'steward_policy_decisions_total{effect="other",code="other",service="policy"}')).toBe(1);
    expect(text).not.toContain("acme");
  });

  it("refuses a definition used as the wrong kind", () => {
    const metrics = createMetrics("policy", { defaults: false });
    expect(() => metrics.histogram(metricCatalog.policyDecisions)).toThrow(TypeError);
  });

  it("observes histograms in seconds and collects gauges at scrape time", async () => {
    const metrics = createMetrics("tool-exec", { defaults: false });
    metrics.histogram(metricCatalog.pdpAskDuration).observe({ effect: "permit" }, 0.02);
    const pool = { totalCount: 3, idleCount: 1, waitingCount: 0 };
    watchPools(metrics, { main: pool });
    pool.totalCount = 4;
    const text = await metrics.text();
    expect(valueOf(text, 'steward_pdp_ask_duration_seconds_count{effect="permit",service="tool-exec"}')).toBe(1);
    expect(valueOf(text, 'steward_pdp_ask_duration_seconds_bucket{le="0.025",effect="permit",service="tool-exec"}')).toBe(1);
    expect(valueOf(text, 'steward_pdp_ask_duration_seconds_bucket{le="0.01",effect="permit",service="tool-exec"}')).toBe(0);
    expect(valueOf(text, 'steward_pg_pool_clients{pool="main",state="total",service="tool-exec"}')).toBe(4);
    expect(valueOf(text, 'steward_pg_pool_clients{pool="main",state="idle",service="tool-exec"}')).toBe(1);
    expect(valueOf(text, 'steward_pg_pool_clients{pool="main",state="waiting",service="tool-exec"}')).toBe(0);
  });

  it("shows a breaker's current state as 1 and its others as 0", async () => {
    const metrics = createMetrics("agent-runner", { defaults: false });
    const report = breakerGauge(metrics);
    report("tool-exec", "closed");
    report("tool-exec", "open");
    const text = await metrics.text();
    expect(valueOf(text, 'steward_breaker_state{breaker="tool-exec",state="open",service="agent-runner"}')).toBe(1);
    expect(valueOf(text, 'steward_breaker_state{breaker="tool-exec",state="closed",service="agent-runner"}')).toBe(0);
    expect(valueOf(text, 'steward_breaker_state{breaker="tool-exec",state="half_open",service="agent-runner"}')).toBe(0);
  });

  it("includes Node's default metrics with the steward_ prefix", async () => {
    const text = await createMetrics("gateway").text();
    expect(text).toMatch(/^steward_process_cpu_user_seconds_total\{service="gateway"\} /m);
    expect(text).toMatch(/^steward_nodejs_heap_size_used_bytes\{service="gateway"\} /m);
  });
});

describe("/metrics on the health port", () => {
  let server: HealthServer | undefined;
  afterEach(async () => server?.close());

  it("serves the registry as Prometheus text beside /healthz", async () => {
    const metrics = createMetrics("policy");
    metrics.counter(metricCatalog.policyDecisions).inc({ effect: "permit", code: "none" });
    server = await serveHealth(createReadiness(), { host: "127.0.0.1", port: 0 }, { metrics });
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toContain("# TYPE steward_policy_decisions_total counter");
    expect(valueOf(text, 'steward_policy_decisions_total{effect="permit",code="none",service="policy"}')).toBe(1);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("answers 404 for /metrics when the process has no metrics", async () => {
    server = await serveHealth(createReadiness(), { host: "127.0.0.1", port: 0 });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });
});
