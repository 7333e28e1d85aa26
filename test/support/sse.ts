import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface SseClient {
  /** Every message received so far (stored events and deltas), in arrival order. */
  readonly messages: EventSourceMessage[];
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  /** Resolves once `predicate` holds for the messages received, or rejects after `timeoutMs`. */
  until(predicate: (messages: EventSourceMessage[]) => boolean, timeoutMs?: number): Promise<EventSourceMessage[]>;
  close(): void;
}

/** Opens a run's event stream the way a browser's EventSource would, optionally resuming after an id. */
export async function openEventStream(url: string, token: string, lastEventId?: string): Promise<SseClient> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: "text/event-stream", authorization: `Bearer ${token}` };
  if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
  const res = await fetch(url, { headers, signal: abort.signal });
  if (res.status !== 200 || !res.body) throw new Error(`stream answered ${res.status}`);
  const messages: EventSourceMessage[] = [];
  const waiters = new Set<() => void>();
  const parser = createParser({
    onEvent(message) {
      messages.push(message);
      for (const w of waiters) w();
    },
  });
  let finished = false;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {
      // closed by us
    } finally {
      finished = true;
      for (const w of waiters) w();
    }
  })();
  return {
    messages,
    ended,
    until(predicate, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(messages)) {
            cleanup();
            resolve(messages);
          } else if (finished) {
            cleanup();
            reject(new Error(`stream ended before the condition held (${messages.length} messages)`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out after ${timeoutMs} ms with ${messages.length} messages`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close() {
      abort.abort();
    },
  };
}
