import { createServer, type Server } from "node:http";
import type { Metrics } from "../metrics/registry";
import type { Readiness } from "./readiness";

export interface HealthServer {
  /** The bound address as a URL, e.g. http://127.0.0.1:8081. */
  readonly url: string;
  close(): Promise<void>;
}

export interface HealthServeOptions {
  /** Served as Prometheus text on `/metrics` (the operator's port, never a public one); without it, 404. */
  readonly metrics?: Metrics;
}

/**
 * `/healthz` (200 while the process lives), `/readyz` (200 when every check passes, else 503 with the
 * reasons) and `/metrics` on their own port, for the services whose main port is not HTTP.
 */
export function serveHealth(readiness: Readiness, address: { host: string; port: number }, options: HealthServeOptions = {}): Promise<HealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, { status: "method not allowed" });
    if (path === "/healthz") return send(200, { status: "ok" });
    if (path === "/readyz") {
      readiness.report().then(
        (r) => send(r.ready ? 200 : 503, { status: r.ready ? "ready" : "not ready", reasons: r.reasons, checks: r.checks }),
        () => send(503, { status: "not ready", reasons: ["readiness could not be determined"] }),
      );
      return;
    }
    if (path === "/metrics" && options.metrics) {
      const metrics = options.metrics;
      metrics.text().then(
        (text) => {
          res.writeHead(200, { "content-type": metrics.contentType, "cache-control": "no-store" });
          res.end(req.method === "HEAD" ? undefined : text);
        },
        () => send(500, { status: "metrics could not be collected" }),
      );
      return;
    }
    send(404, { status: "not found" });
  });
  server.keepAliveTimeout = 5000;
  server.requestTimeout = 10_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => {
      server.off("error", reject);
      const bound = server.address();
      const port = typeof bound === "object" && bound ? bound.port : address.port;
      resolve({
        url: `http://${address.host.includes(":") ? `[${address.host}]` : address.host}:${port}`,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}
