import { Agent, request } from "node:http";

/** A small keep-alive JSON client for the gateway (so that connection set-up is not measured). */
export interface GatewayClient {
  post(path: string, body: unknown, token: string): Promise<{ status: number; body: any }>;
  get(path: string, token: string): Promise<{ status: number; body: any }>;
  close(): void;
}

export function gatewayClient(baseUrl: string): GatewayClient {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const call = (method: string, path: string, token: string, body?: unknown) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method,
          path,
          agent,
          headers: {
            authorization: `Bearer ${token}`,
            ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // not JSON
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
          res.on("error", reject);
        },
      );
      req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on("error", reject);
      req.end(payload);
    });
  return {
    post: (path, body, token) => call("POST", path, token, body),
    get: (path, token) => call("GET", path, token),
    close: () => agent.destroy(),
  };
}
