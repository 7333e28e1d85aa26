import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstreamManager,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@steward/contract";

export { AckPolicy, DeliverPolicy, RetentionPolicy, StorageType };

const NANOS_PER_MS = 1_000_000;

function isNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.status === 404;
}

/** Creates the stream, or brings an existing one to this configuration. Safe to run on every start. */
export async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    await jsm.streams.info(config.name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    try {
      await jsm.streams.add(config);
      return;
    } catch (addErr) {
      // Another process may have created it between our look and our add.
      if (!(addErr instanceof JetStreamApiError)) throw addErr;
    }
  }
  const { name, retention: _retention, storage: _storage, ...mutable } = config;
  await jsm.streams.update(name, mutable);
}

/** Creates the durable consumer, or updates it to this configuration. */
export async function ensureConsumer(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig> & { durable_name: string }): Promise<void> {
  try {
    await jsm.consumers.info(stream, config.durable_name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await jsm.consumers.add(stream, config);
    return;
  }
  const { durable_name, deliver_policy: _d, ack_policy: _a, filter_subject: _f, ...mutable } = config;
  await jsm.consumers.update(stream, durable_name, mutable);
}

export interface TopologyOptions {
  /** How long run events stay on the bus, in ms. Default 7 days. */
  eventMaxAgeMs?: number;
  /** Replicas of each stream (STEWARD_NATS_REPLICAS); 3 on a three-node cluster. Default 1. */
  replicas?: number;
}

export interface RunnerConsumerOptions {
  /** How long an unacknowledged run command waits before redelivery, in ms. Default 30 000. */
  ackWaitMs?: number;
  /** Deliveries of one command before JetStream gives up on it. Default 5. */
  maxDeliver?: number;
}

/**
 * Steward's JetStream streams: the command stream (work queue for `agent.run.requested`), the event stream
 * (a copy of every run event) and the dead-letter stream.
 */
export async function provisionTopology(nc: NatsConnection, names: BusNames, options: TopologyOptions = {}): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const replicas = options.replicas ?? 1;
  await ensureStream(jsm, {
    name: names.commandStream,
    num_replicas: replicas,
    description: "Steward commands: agent.run.requested, one message per run to drive (work queue)",
    subjects: [names.runRequested],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS,
  });
  await ensureStream(jsm, {
    name: names.eventStream,
    num_replicas: replicas,
    description: "Steward run events: a copy of every event, on agent.events.<run_id>.<type>",
    subjects: [names.allEvents],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: (options.eventMaxAgeMs ?? 7 * 24 * 3600 * 1000) * NANOS_PER_MS,
    duplicate_window: 2 * 60 * 1000 * NANOS_PER_MS,
  });
  await ensureStream(jsm, {
    name: names.deadLetterStream,
    num_replicas: replicas,
    description: "Steward dead letters: commands that can never succeed, with the reason",
    subjects: [names.deadLetterRunRequested],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
  });
}

/** The runners' shared durable pull consumer on the command stream (the runners own its settings). */
export async function provisionRunnerConsumer(nc: NatsConnection, names: BusNames, options: RunnerConsumerOptions = {}): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const ackWait = options.ackWaitMs ?? 30_000;
  const maxDeliver = options.maxDeliver ?? 5;
  await ensureConsumer(jsm, names.commandStream, {
    durable_name: names.runnerConsumer,
    description: "agent-runner replicas share this consumer; one delivery drives one run",
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ackWait * NANOS_PER_MS,
    max_deliver: maxDeliver,
    filter_subject: names.runRequested,
  });
}
