import type { SseEvent } from "@steward/contract";
import { readSse } from "./sse";

describe("readSse", () => {
  it("reads a byte stream to its end, multi-byte characters split across chunks included", async () => {
    const bytes = new TextEncoder().encode('id: 2\nevent: message\ndata: {"t":"30 días"}\n\n');
    const cut = bytes.indexOf(0xc3) + 1; // in the middle of "í"
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, cut));
        c.enqueue(bytes.slice(cut));
        c.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const e of readSse(body)) events.push(e);
    expect(events).toEqual([{ event: "message", id: "2", data: '{"t":"30 días"}' }]);
  });
});
