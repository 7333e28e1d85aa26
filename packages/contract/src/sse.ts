/** One Server-Sent Event as received: its name (default "message"), its id if any, and its data lines joined. */
export interface SseEvent {
  readonly event: string;
  readonly id?: string;
  readonly data: string;
}

/**
 * A Server-Sent Events parser (the WHATWG rules the gateway's stream and OpenAI-compatible model endpoints
 * follow): feed it text as it arrives, in any pieces; it calls `onEvent` for every complete event. Comments and `retry:` lines are skipped; an event
 * without data is not dispatched.
 */
export function createSseParser(onEvent: (event: SseEvent) => void): { feed(chunk: string): void } {
  let buffer = "";
  let name = "";
  let id: string | undefined;
  let data: string[] = [];

  function line(text: string): void {
    if (text === "") {
      if (data.length > 0) onEvent({ event: name || "message", ...(id !== undefined ? { id } : {}), data: data.join("\n") });
      name = "";
      id = undefined;
      data = [];
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
    else if (field === "id" && !value.includes("\0")) id = value;
  }

  return {
    feed(chunk: string): void {
      buffer += chunk;
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer);
        // A lone \r at the end may be the first half of \r\n: wait for the next piece.
        if (!match || (match[0] === "\r" && match.index === buffer.length - 1)) return;
        const text = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        line(text);
      }
    },
  };
}
