import type { PubAck } from "@nats-io/jetstream";
import { startTracing, type StreamPublisher, type TracingOptions } from "@steward/platform";
import type { OutboxRow } from "./outbox-row";
import { publishTraced } from "./publish-span";

type Exporter = NonNullable<TracingOptions["exporter"]>;
type Exported = Parameters<Exporter["export"]>[0][number];

const stored = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const runId = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";

/** A publisher stand-in that records each publish as it is called (synchronously) and acknowledges it. */
function recordingJs() {
  const sent: Array<{ subject: string; msgID?: string; traceparent?: string }> = [];
  const js: StreamPublisher = {
    waiting: 0,
    publish({ subject, msgId, headers }) {
      sent.push({ subject, msgID: msgId, traceparent: headers.traceparent || undefined });
      return Promise.resolve({ stream: "S", seq: sent.length, duplicate: false } as PubAck);
    },
  };
  return { js, sent };
}

function row(n: number, headers: Record<string, string> = { traceparent: stored }): OutboxRow {
  return { id: String(n), subject: `ns.agent.events.${runId}.thought`, msg_id: `m${n}`, payload: "{}", headers };
}

describe("an outbox publish's span", () => {
  it("off: the row goes out exactly as stored", async () => {
    const { js, sent } = recordingJs();
    await publishTraced(js, row(1));
    expect(sent).toEqual([{ subject: `ns.agent.events.${runId}.thought`, msgID: "m1", traceparent: stored }]);
  });

  it("on: a producer span under the row's trace context, whose traceparent the message carries; rows keep their order", async () => {
    const spans: Exported[] = [];
    const exporter: Exporter = { export: (batch, done) => (spans.push(...batch), done({ code: 0 })), shutdown: async () => undefined };
    const tracing = startTracing("test", { source: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }, exporter });
    const { js, sent } = recordingJs();
    try {
      const pending = [row(1), row(2), row(3, {})].map((r) => publishTraced(js, r));
      // Every publish was called before any was awaited, in row order: JetStream stores them so.
      expect(sent.map((s) => s.msgID)).toEqual(["m1", "m2", "m3"]);
      await Promise.all(pending);
    } finally {
      await tracing.shutdown();
    }
    expect(spans).toHaveLength(3);
    for (const [i, s] of sent.entries()) {
      const span = spans.find((x) => x.attributes["messaging.message.id"] === s.msgID)!;
      expect(span.name).toBe("send ns.agent.events.{run_id}.thought");
      expect(span.kind).toBe(3); // PRODUCER
      expect(span.attributes["messaging.destination.name"]).toBe(`ns.agent.events.${runId}.thought`);
      expect(s.traceparent).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
      if (i < 2) expect(span.parentSpanContext?.spanId).toBe("b7ad6b7169203331");
      else expect(span.parentSpanContext).toBeUndefined();
    }
  });
});
