import type { PubAck } from "@nats-io/jetstream";
import { inSpan, SpanKind, traceparentFor, tracingOn, type StreamPublisher } from "@steward/platform";
import { publishRow, type OutboxRow } from "./outbox-row";

/** The subject with its run id replaced, so that a span name stays one of a few ("send agent.events.{run_id}.thought"). */
function subjectTemplate(subject: string): string {
  return subject.replace(/(^|\.)agent\.(events|deltas)\.[^.]+/, "$1agent.$2.{run_id}");
}

/**
 * Publishes one outbox row inside a producer span, a child of the trace context the row was written with;
 * the message then carries the span's own traceparent, so that its consumer's spans hang below the publish.
 * Without tracing, the row goes out exactly as stored. The message is handed to the connection synchronously, so
 * rows published one after the other keep their order.
 */
export function publishTraced(bus: StreamPublisher, row: OutboxRow): Promise<PubAck> {
  if (!tracingOn()) return publishRow(bus, row);
  const template = subjectTemplate(row.subject);
  const stored = row.headers.traceparent;
  return inSpan(
    `send ${template}`,
    {
      kind: SpanKind.PRODUCER,
      parent: stored,
      attributes: {
        "messaging.system": "nats",
        "messaging.operation.type": "send",
        "messaging.operation.name": "publish",
        "messaging.destination.name": row.subject,
        "messaging.destination.template": template,
        "messaging.message.id": row.msg_id,
      },
    },
    (span) => {
      const traceparent = traceparentFor(span, stored);
      return publishRow(bus, traceparent ? { ...row, headers: { ...row.headers, traceparent } } : row);
    },
  );
}
