/** How long the gateway's HTTP server waits on clients; every field optional, defaults as documented. */
export interface HttpLimits {
  /** Time to receive a whole request, headers and body, in ms; then 408 and the socket closes. Default 30 000. */
  readonly requestTimeoutMs?: number;
  /** A socket with no traffic either way is destroyed after this many ms. Default 120 000 (above the SSE keep-alive). */
  readonly connectionTimeoutMs?: number;
  /** An idle keep-alive connection between requests is closed after this many ms. Default 72 000. */
  readonly keepAliveTimeoutMs?: number;
  /** Requests served on one keep-alive connection before it is closed. Default 1000. */
  readonly maxRequestsPerSocket?: number;
}

/** The Fastify server options that enforce the limits. */
export function serverOptionsOf(limits: HttpLimits = {}) {
  const requestTimeout = limits.requestTimeoutMs ?? 30_000;
  return {
    requestTimeout,
    connectionTimeout: limits.connectionTimeoutMs ?? 120_000,
    keepAliveTimeout: limits.keepAliveTimeoutMs ?? 72_000,
    maxRequestsPerSocket: limits.maxRequestsPerSocket ?? 1_000,
    // Node checks request deadlines on this interval (default 30 s): check often enough that a deadline holds
    // to within a quarter of itself.
    // Host is checked by the requireHost hook instead, so that its refusal is a problem document too.
    http: { connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(requestTimeout / 4))), requireHostHeader: false },
  };
}
