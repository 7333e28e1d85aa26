import { createSseParser, type SseEvent } from "@steward/contract";

/** Reads a byte stream of SSE and yields its events, in order, until the stream ends. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const queue: SseEvent[] = [];
  const parser = createSseParser((e) => queue.push(e));
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        parser.feed(decoder.decode());
        yield* queue.splice(0);
        return;
      }
      parser.feed(decoder.decode(value, { stream: true }));
      yield* queue.splice(0);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
