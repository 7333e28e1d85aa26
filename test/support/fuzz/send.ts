import type { FuzzRequest } from "./generate";
import { sendRaw } from "./raw";

/** How a request ended, as the checks need it. */
export interface Answer {
  readonly status: number | null;
  readonly headers: Record<string, string>;
  /** The body as text (the first part of an event stream). */
  readonly text: string;
  /** No answer within the bound. */
  readonly hang: boolean;
  /** The connection ended without an answer, or the client could not send the request at all. */
  readonly dropped?: string;
  /** The client stopped reading an event stream on purpose. */
  readonly streamCut: boolean;
}

export interface SendOptions {
  /** The bound on a whole answer (an event stream: its headers), in ms. */
  readonly timeoutMs: number;
  /** How long an event stream is read after its headers, in ms. */
  readonly streamReadMs: number;
  /** The most of an event stream read, in bytes. */
  readonly streamReadBytes: number;
}

/** Sends one request and reads its answer within the bounds; never throws. */
export async function sendFuzzRequest(baseUrl: string, r: FuzzRequest, options: SendOptions): Promise<Answer> {
  if (r.raw) {
    const url = new URL(baseUrl);
    const a = await sendRaw(url.hostname, Number(url.port), r.raw, options.timeoutMs);
    return { status: a.status, headers: a.headers, text: a.body.toString("utf8"), hang: a.hang, dropped: a.dropped, streamCut: false };
  }
  const bound = AbortSignal.timeout(options.timeoutMs);
  const cut = new AbortController();
  let res: Response;
  try {
    res = await fetch(`${baseUrl}${r.target}`, {
      method: r.method,
      headers: r.headers,
      body: r.body,
      redirect: "manual",
      signal: AbortSignal.any([bound, cut.signal]),
    });
  } catch (err) {
    if (bound.aborted) return { status: null, headers: {}, text: "", hang: true, streamCut: false };
    return { status: null, headers: {}, text: "", hang: false, dropped: reasonOf(err), streamCut: false };
  }
  const headers = Object.fromEntries(res.headers.entries());
  try {
    if (!(headers["content-type"] ?? "").startsWith("text/event-stream") || !res.body) {
      return { status: res.status, headers, text: await res.text(), hang: false, streamCut: false };
    }
    const text = await readStreamBriefly(res.body, options, cut);
    return { status: res.status, headers, text: text.value, hang: false, streamCut: text.cut };
  } catch (err) {
    if (bound.aborted) return { status: res.status, headers, text: "", hang: true, streamCut: false };
    return { status: res.status, headers, text: "", hang: false, dropped: `body: ${reasonOf(err)}`, streamCut: false };
  }
}

/** Reads an event stream until it ends, or for a short while, or up to a size; then lets it go. */
async function readStreamBriefly(body: ReadableStream<Uint8Array>, options: SendOptions, cut: AbortController): Promise<{ value: string; cut: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let value = "";
  const stop = setTimeout(() => cut.abort(), options.streamReadMs);
  try {
    for (;;) {
      const chunk = await reader.read().catch((err: unknown) => {
        if (cut.signal.aborted) return { done: true as const, value: undefined };
        throw err;
      });
      if (chunk.done) return { value, cut: cut.signal.aborted };
      value += decoder.decode(chunk.value, { stream: true });
      if (value.length >= options.streamReadBytes) {
        cut.abort();
        return { value, cut: true };
      }
    }
  } finally {
    clearTimeout(stop);
    await reader.cancel().catch(() => undefined);
  }
}

function reasonOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message ?? String(err);
}
