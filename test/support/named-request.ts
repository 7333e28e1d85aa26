import { request } from "node:http";

/**
 * One HTTP request to a gateway with the headers as given, `Host` included (fetch always sends the URL's own): what
 * a page on another name that resolves to the gateway's address sends. Answers the status and the body's text.
 */
export function namedRequest(
  url: string,
  options: { method?: string; headers: Record<string, string>; body?: unknown },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const target = new URL(url);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? "GET",
        headers: {
          ...(body !== undefined ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
