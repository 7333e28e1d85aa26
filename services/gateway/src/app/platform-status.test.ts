import type { InstanceStatus } from "@steward/platform";
import { createPlatformStatus, type BusView } from "./platform-status";

const ready = { ready: true, checks: { postgres: { ok: true as const }, nats: { ok: true as const }, policy: { ok: true as const } }, reasons: [] };
const instance = (service: string, more: Partial<InstanceStatus> = {}): InstanceStatus => ({
  service,
  instance: `${service}-1`,
  ready: true,
  reasons: [],
  started_at: "2026-11-30T22:00:00.000Z",
  ...more,
});
const quiet = { queued: 0, running: 0, awaiting: 0, oldestQueuedAgeSeconds: null, outboxBacklog: 0, outboxOldestAgeSeconds: null, outboxSetAside: 0 };
const bus = (instances: InstanceStatus[]): BusView => ({
  instances,
  consumer: { pending: 0, ackPending: 0, redelivered: 0, waitingPulls: 32 },
  deadLetters: { count: 0, lastAt: null },
});

describe("the platform status", () => {
  it("is ok when every part answers and nothing waits", async () => {
    const status = createPlatformStatus({
      gateway: async () => ready,
      backlog: async () => quiet,
      bus: async () => bus([instance("gateway"), instance("policy"), instance("agent-runner", { in_flight: 3 })]),
    });
    const s = await status();
    expect({ status: s.status, problems: s.problems, runners: s.runners.attached, inFlight: s.runners.in_flight }).toEqual({
      status: "ok",
      problems: [],
      runners: 1,
      inFlight: 3,
    });
  });

  it("names each problem: no runner, an instance not ready, old queued runs, an outbox backlog, rows set aside", async () => {
    const status = createPlatformStatus({
      gateway: async () => ready,
      backlog: async () => ({ ...quiet, queued: 4, oldestQueuedAgeSeconds: 42.5, outboxBacklog: 7, outboxOldestAgeSeconds: 12, outboxSetAside: 2 }),
      bus: async () => bus([instance("gateway"), instance("policy", { ready: false, reasons: ["postgres: PostgreSQL is unreachable (57P01)"] })]),
    });
    const s = await status();
    expect(s.status).toBe("degraded");
    expect(s.problems).toEqual([
      "no runner is attached: queued runs will not start",
      "policy policy-1: postgres: PostgreSQL is unreachable (57P01)",
      "the oldest queued run has waited 42.5 s",
      "7 outbox rows are not on the bus; the oldest for 12 s",
      "2 outbox rows were set aside: NATS refused them (see outbox.last_error)",
    ]);
    expect(s.outbox).toEqual({ backlog: 7, oldest_age_seconds: 12, set_aside: 2 });
  });

  it("still answers when NATS and PostgreSQL cannot be asked, saying what is unknown", async () => {
    const status = createPlatformStatus({
      gateway: async () => ({
        ready: false,
        checks: { ...ready.checks, nats: { ok: false as const, reason: "NATS is not connected" } },
        reasons: ["nats: NATS is not connected"],
      }),
      backlog: async () => Promise.reject(new Error("connection refused")),
      bus: async () => null,
    });
    const s = await status();
    expect(s.problems).toEqual([
      "gateway: nats: NATS is not connected",
      "the bus could not be asked: instances, runners and dead letters are unknown",
      "PostgreSQL could not be asked for the backlog",
    ]);
    expect({ queue: s.queue, outbox: s.outbox, dead: s.dead_letters, consumer: s.runners.consumer }).toEqual({
      queue: null,
      outbox: null,
      dead: null,
      consumer: null,
    });
  });
});
