/**
 * Names on the bus. A deployment may set a namespace so that several environments (or test suites) share
 * one NATS server without seeing each other's messages; the default namespace is empty.
 */
export interface BusNames {
  readonly commandStream: string;
  readonly eventStream: string;
  readonly deadLetterStream: string;
  readonly runRequested: string;
  readonly runnerConsumer: string;
  runEvent(runId: string, type: string): string;
  runEvents(runId: string): string;
  /** Token deltas of a run's model stream: core NATS only, never stored. */
  runDeltas(runId: string): string;
  readonly allEvents: string;
  readonly deadLetterRunRequested: string;
  /** Core NATS request answered by every live service instance with its readiness (the status route). */
  readonly statusPing: string;
}

export function busNames(namespace = ""): BusNames {
  const s = namespace ? `${namespace}.` : "";
  const n = namespace ? `${namespace.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_` : "";
  return {
    commandStream: `${n}AGENT_COMMANDS`,
    eventStream: `${n}AGENT_EVENTS`,
    deadLetterStream: `${n}AGENT_DLQ`,
    runRequested: `${s}agent.run.requested`,
    runnerConsumer: `${n ? n.toLowerCase() : ""}agent-runner`,
    runEvent: (runId, type) => `${s}agent.events.${runId}.${type}`,
    runEvents: (runId) => `${s}agent.events.${runId}.>`,
    runDeltas: (runId) => `${s}agent.deltas.${runId}`,
    allEvents: `${s}agent.events.>`,
    deadLetterRunRequested: `${s}agent.dlq.run.requested`,
    statusPing: `${s}steward.status.ping`,
  };
}
