/** One Server-Sent Event as received. */
export interface SseMessage {
  readonly event: string;
  readonly data: string;
  readonly id?: string;
}

/** Splits an SSE byte stream into messages (the WHATWG rules this stream needs: event, data, id, retry). */
export function createSseParser(onMessage: (message: SseMessage) => void, onRetry: (ms: number) => void): (chunk: string) => void {
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let id: string | undefined;
  const line = (raw: string) => {
    if (raw === "") {
      if (data.length > 0) onMessage({ event: event || "message", data: data.join("\n"), ...(id !== undefined ? { id } : {}) });
      event = "";
      data = [];
      id = undefined;
      return;
    }
    if (raw.startsWith(":")) return;
    const colon = raw.indexOf(":");
    const field = colon < 0 ? raw : raw.slice(0, colon);
    const value = colon < 0 ? "" : raw.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    else if (field === "id" && !value.includes("\0")) id = value;
    else if (field === "retry" && /^\d+$/.test(value)) onRetry(Number(value));
  };
  // A CRLF split between two chunks is one line end, not a CR and then a blank line (which would end a
  // message early): a chunk ending in CR drops the LF that may open the next one.
  let skipLf = false;
  return (chunk) => {
    const text = skipLf && chunk.startsWith("\n") ? chunk.slice(1) : chunk;
    if (chunk !== "") skipLf = false;
    buffer += text;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop() ?? "";
    if (text.endsWith("\r")) skipLf = true;
    for (const l of lines) line(l);
  };
}

export interface FollowOptions {
  readonly path: string;
  readonly token: string;
  readonly onMessage: (message: SseMessage) => void;
  /** "live", "reconnecting" or "ended"; the detail of a refusal when the stream cannot go on. */
  readonly onStatus: (status: "live" | "reconnecting" | "ended", detail?: string) => void;
  readonly signal: AbortSignal;
  /** Whether the run's terminal event was seen: a stream that closes before it is resumed. */
  readonly finished: () => boolean;
}

/**
 * Follows a run's event stream with fetch (EventSource cannot send an Authorization header) and resumes after
 * the last `id:` seen with Last-Event-ID whenever the connection drops, until the server ends the stream after
 * the run's terminal event, the stream is refused, or `signal` aborts.
 */
export async function followEvents(options: FollowOptions): Promise<void> {
  let lastId: string | undefined;
  let retryMs = 1000;
  let failures = 0;
  while (!options.signal.aborted) {
    const headers: Record<string, string> = { accept: "text/event-stream", authorization: `Bearer ${options.token}` };
    if (lastId !== undefined) headers["last-event-id"] = lastId;
    try {
      const res = await fetch(options.path, { headers, signal: options.signal, cache: "no-store" });
      if (!res.ok || !res.body) {
        const problem = (await res.json().catch(() => ({}))) as { detail?: string };
        options.onStatus("ended", problem.detail ?? `HTTP ${res.status}`);
        return;
      }
      options.onStatus("live");
      failures = 0;
      const parse = createSseParser(
        (message) => {
          if (message.id !== undefined) lastId = message.id;
          options.onMessage(message);
        },
        (ms) => (retryMs = ms),
      );
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parse(value);
      }
      // The server ends the stream after the terminal event; closed before it, the stream is resumed.
      if (options.finished()) {
        options.onStatus("ended");
        return;
      }
      throw new Error("the stream closed early");
    } catch {
      if (options.signal.aborted) return;
      failures += 1;
      options.onStatus("reconnecting");
      await new Promise((resolve) => setTimeout(resolve, Math.min(retryMs * failures, 10_000)));
    }
  }
}
