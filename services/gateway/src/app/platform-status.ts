import type { InstanceStatus, ReadinessReport } from "@steward/platform";
import type { Backlog, OpenRuns, TenantBacklog } from "@steward/store";

/** What the bus side of the status reports (null parts: the bus could not say). */
export interface BusView {
  readonly instances: readonly InstanceStatus[];
  readonly consumer: { pending: number; ackPending: number; redelivered: number; waitingPulls: number } | null;
  readonly deadLetters: { count: number; lastAt: string | null } | null;
}

export interface StatusPorts {
  /** The gateway's own readiness: PostgreSQL, NATS, the PDP. */
  readonly gateway: () => Promise<ReadinessReport>;
  readonly backlog: () => Promise<Backlog>;
  /** Null when NATS is not connected. */
  readonly bus: () => Promise<BusView | null>;
}

/** A queued run older than this, or an outbox row older than this, is worth an operator's look (s). */
const QUEUED_TOO_LONG_S = 30;

/** The open runs as the status shows them, the platform's or a tenant's. */
const queueView = (runs: OpenRuns | null) =>
  runs ? { queued: runs.queued, running: runs.running, awaiting: runs.awaiting, oldest_queued_age_seconds: runs.oldestQueuedAgeSeconds } : null;

/** The problem of a queued run waiting too long (`whose`: "the" or "the tenant's"), or none. */
const queueProblem = (runs: OpenRuns, whose: string): string[] =>
  (runs.oldestQueuedAgeSeconds ?? 0) > QUEUED_TOO_LONG_S ? [`${whose} oldest queued run has waited ${runs.oldestQueuedAgeSeconds} s`] : [];
const OUTBOX_TOO_OLD_S = 10;

/**
 * The platform's state for an operator: each dependency as the gateway sees it, every live instance as it
 * sees itself, the runners attached to the command consumer, what waits (queued runs, outbox), dead
 * letters, and the problems in plain words. Never a secret: names, counts, ages, reasons.
 */
export function createPlatformStatus(ports: StatusPorts) {
  return async function status() {
    const [gateway, backlog, bus] = await Promise.all([ports.gateway(), ports.backlog().catch(() => null), ports.bus().catch(() => null)]);
    const problems: string[] = gateway.reasons.map((r) => `gateway: ${r}`);
    const instances = bus?.instances ?? [];
    const runners = instances.filter((i) => i.service === "agent-runner");
    if (!bus) problems.push("the bus could not be asked: instances, runners and dead letters are unknown");
    else {
      if (runners.length === 0) problems.push("no runner is attached: queued runs will not start");
      if (!instances.some((i) => i.service === "policy")) problems.push("no policy instance answered");
      for (const i of instances) if (!i.ready) problems.push(`${i.service} ${i.instance}: ${i.reasons.join("; ") || "not ready"}`);
    }
    if (!backlog) problems.push("PostgreSQL could not be asked for the backlog");
    else {
      problems.push(...queueProblem(backlog, "the"));
      if ((backlog.outboxOldestAgeSeconds ?? 0) > OUTBOX_TOO_OLD_S) {
        problems.push(`${backlog.outboxBacklog} outbox rows are not on the bus; the oldest for ${backlog.outboxOldestAgeSeconds} s`);
      }
      if (backlog.outboxSetAside > 0) problems.push(`${backlog.outboxSetAside} outbox rows were set aside: NATS refused them (see outbox.last_error)`);
    }
    const check = (name: string) => gateway.checks[name] ?? null;
    return {
      scope: "platform" as const,
      status: problems.length === 0 ? "ok" : "degraded",
      checked_at: new Date().toISOString(),
      problems,
      dependencies: { postgres: check("postgres"), nats: check("nats"), policy: check("policy") },
      services: instances.map((i) => ({ ...i })),
      runners: {
        attached: runners.length,
        in_flight: runners.reduce((n, r) => n + (typeof r.in_flight === "number" ? r.in_flight : 0), 0),
        consumer: bus?.consumer
          ? {
              pending: bus.consumer.pending,
              ack_pending: bus.consumer.ackPending,
              redelivered: bus.consumer.redelivered,
              waiting_pulls: bus.consumer.waitingPulls,
            }
          : null,
      },
      queue: queueView(backlog),
      outbox: backlog ? { backlog: backlog.outboxBacklog, oldest_age_seconds: backlog.outboxOldestAgeSeconds, set_aside: backlog.outboxSetAside } : null,
      dead_letters: bus?.deadLetters ? { count: bus.deadLetters.count, last_at: bus.deadLetters.lastAt } : null,
    };
  };
}

export type PlatformStatus = ReturnType<typeof createPlatformStatus>;

export interface TenantStatusPorts {
  /** The gateway's own readiness: PostgreSQL, NATS, the PDP. */
  readonly gateway: () => Promise<ReadinessReport>;
  readonly backlog: (tenantId: string) => Promise<TenantBacklog>;
}

/**
 * What a tenant's administrator sees: whether the platform serves, and the tenant's own open runs. Nothing of
 * another tenant (no counts), and nothing of the platform's insides (no instance ids, no dependency's reasons).
 */
export function createTenantStatus(ports: TenantStatusPorts) {
  return async function status(tenantId: string) {
    const [gateway, backlog] = await Promise.all([ports.gateway(), ports.backlog(tenantId).catch(() => null)]);
    const problems: string[] = [];
    if (!gateway.ready) problems.push("the platform is degraded: some of its dependencies do not answer; its operators can see which");
    if (!backlog) problems.push("the tenant's runs could not be counted");
    else problems.push(...queueProblem(backlog, "the tenant's"));
    return {
      scope: "tenant" as const,
      tenant_id: tenantId,
      status: problems.length === 0 ? "ok" : "degraded",
      checked_at: new Date().toISOString(),
      problems,
      queue: queueView(backlog),
    };
  };
}

export type TenantStatus = ReturnType<typeof createTenantStatus>;

/**
 * The status a caller permitted `platform.status.read` sees: the whole platform for the operators' tenant
 * (STEWARD_OPERATOR_TENANT), its own tenant's view for any other tenant's administrator.
 */
export function createStatusReader(deps: { operatorTenant: string | undefined; platform: PlatformStatus; tenant: TenantStatus }) {
  return (principal: { readonly tenantId: string }) =>
    deps.operatorTenant !== undefined && principal.tenantId === deps.operatorTenant ? deps.platform() : deps.tenant(principal.tenantId);
}

export type StatusReader = ReturnType<typeof createStatusReader>;
