import { readFileSync } from "node:fs";
import { join } from "node:path";
import { metricCatalog } from "./catalog";
import { parseExposition } from "./exposition";
import { createMetrics } from "./registry";

const observability = join(__dirname, "..", "..", "..", "..", "infra", "observability");

interface Panel {
  type: string;
  title: string;
  targets?: Array<{ expr: string }>;
}

/** Every metric name the services can register: the catalog's and Node's defaults (read from a live registry). */
async function registeredNames(): Promise<Set<string>> {
  const names = new Set<string>(Object.values(metricCatalog).map((m) => m.name));
  for (const sample of parseExposition(await createMetrics("any").text())) names.add(sample.name);
  return names;
}

/** The metric a series name belongs to: a histogram's `_bucket`, `_sum` and `_count` are its own. */
function metricOf(series: string, known: Set<string>): string {
  if (known.has(series)) return series;
  const base = series.replace(/_(bucket|sum|count)$/, "");
  return known.has(base) ? base : series;
}

describe("infra/observability", () => {
  const dashboard = JSON.parse(readFileSync(join(observability, "grafana-dashboard.json"), "utf8")) as { title: string; uid: string; panels: Panel[] };
  const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

  it("the dashboard is a Grafana dashboard whose every panel has a query", () => {
    expect(dashboard.title).toBe("Steward");
    expect(dashboard.uid).toMatch(/^[a-z0-9-]+$/);
    for (const panel of dashboard.panels.filter((p) => p.type !== "row")) {
      expect({ panel: panel.title, queries: (panel.targets ?? []).length > 0 }).toEqual({ panel: panel.title, queries: true });
    }
  });

  it("queries only metrics the services register", async () => {
    const known = await registeredNames();
    const unknown = queries.flatMap(({ panel, expr }) =>
      (expr.match(/\bsteward_[a-z0-9_]+/g) ?? [])
        .map((s) => metricOf(s, known))
        .filter((m) => !known.has(m))
        .map((m) => `${panel}: ${m}`),
    );
    expect(unknown).toEqual([]);
  });

  it("shows every catalog metric somewhere", () => {
    const used = queries.map((q) => q.expr).join("\n");
    const missing = Object.values(metricCatalog)
      .map((m) => m.name)
      .filter((name) => !new RegExp(`\\b${name}(_bucket|_sum|_count)?\\b`).test(used));
    expect(missing).toEqual([]);
  });

  it("queries only labels the metric declares (besides service and le)", () => {
    const byName = new Map<string, Set<string>>(Object.values(metricCatalog).map((m) => [m.name, new Set([...Object.keys(m.labels), "service", "le"])]));
    const wrong: string[] = [];
    for (const { panel, expr } of queries) {
      for (const m of expr.matchAll(/\b(steward_[a-z0-9_]+)\{([^}]*)\}/g)) {
        const labels = byName.get(m[1].replace(/_(bucket|sum|count)$/, ""));
        for (const l of m[2].matchAll(/([a-z_]+)\s*(=|!=|=~|!~)/g)) if (labels && !labels.has(l[1])) wrong.push(`${panel}: ${m[1]} has no label ${l[1]}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("the Prometheus configuration scrapes every service's ops port, as npm start lays them out", () => {
    const config = readFileSync(join(observability, "prometheus.yml"), "utf8");
    // The services' HEALTH_PORT defaults (healthConfig in each service); the gateway's is its ops port to be.
    const ports = { "agent-runner": 8081, "tool-exec": 8082, policy: 8083, gateway: 8084 };
    for (const [service, port] of Object.entries(ports)) {
      const job = new RegExp(`job_name: steward-${service}\\n(?:\\s+.*\\n)*?\\s+- targets: \\["127\\.0\\.0\\.1:${port}"\\]`);
      expect({ service, scraped: job.test(config) }).toEqual({ service, scraped: true });
    }
    expect(config).toContain("metrics_path: /metrics");
    expect(config).not.toMatch(/:8080\b/); // never the gateway's public API port
  });
});
