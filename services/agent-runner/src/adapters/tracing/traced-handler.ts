import { inSpan, SpanKind, traceparentFor, tracingOn } from "@steward/platform";
import type { Delivery, RunRequestedHandler } from "../../app/handle-run-requested";

/**
 * One consumer span per delivery of a run command, a child of the publish that sent it (the message's
 * traceparent). The drive sees the span's own traceparent: the events it appends, its tool calls and its
 * log lines' trace id all belong to this span's trace. Off, the delivery is handled as it came.
 */
export function tracedHandler(handle: RunRequestedHandler, bus: { subject: string; consumer: string }): RunRequestedHandler {
  return (delivery: Delivery) => {
    if (!tracingOn()) return handle(delivery);
    return inSpan(
      `process ${bus.subject}`,
      {
        kind: SpanKind.CONSUMER,
        parent: delivery.traceparent,
        attributes: {
          "messaging.system": "nats",
          "messaging.operation.type": "process",
          "messaging.operation.name": "process",
          "messaging.destination.name": bus.subject,
          "messaging.consumer.group.name": bus.consumer,
          "steward.delivery_count": delivery.deliveryCount,
        },
      },
      (span) => handle({ ...delivery, traceparent: traceparentFor(span, delivery.traceparent) }),
    );
  };
}
