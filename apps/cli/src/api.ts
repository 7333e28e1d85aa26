import { ApiError, UnreachableError, type Problem } from "./errors";
import { printableUrl } from "./config";

export interface ApiRequest {
  readonly body?: unknown;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The gateway's REST API as the CLI uses it: JSON in and out, problems turned into ApiError. */
export interface Api {
  readonly baseUrl: string;
  request<T = unknown>(method: string, path: string, options?: ApiRequest): Promise<T>;
  /** Opens a run's event stream (SSE) after `after`; the caller reads the body. */
  openStream(runId: string, after: number, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>>;
}

/** Per-request bound for plain requests, in ms (a stream has none). */
const REQUEST_TIMEOUT_MS = 30_000;

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  if ((err as Error).name === "TimeoutError") return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  return cause?.message ?? (err as Error).message ?? "network error";
}

async function problemOf(res: Response): Promise<Problem> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text) as Partial<Problem>;
    return {
      status: res.status,
      ...(typeof body.title === "string" ? { title: body.title } : { title: res.statusText }),
      ...(typeof body.detail === "string" ? { detail: body.detail } : {}),
      ...(typeof body.code === "number" ? { code: body.code } : {}),
    };
  } catch {
    return { status: res.status, title: res.statusText || "error" };
  }
}

/** `token` is asked for lazily (a development token is minted only when a request needs it). */
export function createApi(baseUrl: string, token: () => Promise<string>): Api {
  const where = printableUrl(baseUrl);

  async function send(method: string, path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(`${baseUrl}${path}`, { method, ...init });
    } catch (err) {
      if ((err as Error).name === "AbortError") throw err;
      throw new UnreachableError(`cannot reach Steward at ${where}: ${describeCause(err)}`, { cause: err });
    }
  }

  async function check(res: Response): Promise<Response> {
    if (res.ok) return res;
    throw new ApiError(await problemOf(res));
  }

  return {
    baseUrl,
    async request<T>(method: string, path: string, options: ApiRequest = {}): Promise<T> {
      const query = Object.entries(options.query ?? {}).filter(([, v]) => v !== undefined);
      const search = query.length ? `?${new URLSearchParams(query.map(([k, v]): [string, string] => [k, String(v)])).toString()}` : "";
      const headers: Record<string, string> = { accept: "application/json", authorization: `Bearer ${await token()}`, ...(options.headers ?? {}) };
      let body: string | undefined;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers["content-type"] = "application/json";
      }
      const res = await check(await send(method, `${path}${search}`, { headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
      if (res.status === 204) return null as T;
      const text = await res.text();
      return (text ? JSON.parse(text) : null) as T;
    },
    async openStream(runId, after, signal) {
      const headers = { accept: "text/event-stream", authorization: `Bearer ${await token()}`, ...(after > 0 ? { "last-event-id": String(after) } : {}) };
      const res = await check(await send("GET", `/v1/agents/runs/${runId}/events`, { headers, signal }));
      if (!res.body) throw new UnreachableError(`the event stream from ${where} had no body`);
      return res.body;
    },
  };
}
