import type { Logger } from "@steward/platform";
import type { McpMode } from "../../domain/mcp-mode";
import { createTally } from "../../domain/tally";

/** What the registry needs of a session's transport and server: a way to close both. */
export interface ClosableSession {
  close(): Promise<void>;
}

export interface McpSession<T extends ClosableSession = ClosableSession> {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly mode: McpMode;
  readonly handle: T;
  lastUsedAt: number;
}

/** A session as the journal records it: who opened it, in which mode. */
export type McpSessionEntry = Pick<McpSession, "id" | "tenantId" | "userId" | "mode">;

/** The durable record of sessions (the audit's GET /v1/audit/mcp-sessions reads it). */
export interface McpSessionJournal {
  /** Records a session opened; rejects when it could not be written, and then the session is not opened. */
  opened(session: McpSessionEntry): Promise<void>;
  /** Records a session closed and why; the first close of a session wins. */
  closed(session: McpSessionEntry, why: string): Promise<void>;
}

/** Records nothing: for a gateway built without a store (unit tests of other routes). */
export const NO_JOURNAL: McpSessionJournal = { opened: async () => undefined, closed: async () => undefined };

export interface McpSessionLimits {
  /** Open sessions one user may hold; opening one more closes their least recently used. */
  readonly perUser: number;
  /** A session unused this long is closed, in ms. */
  readonly idleMs: number;
  /** Open sessions of this gateway; beyond it a new one is refused. */
  readonly max: number;
  /** Open sessions of one tenant on this gateway (its share of `max`); beyond it the tenant's new one is refused. */
  readonly perTenant: number;
}

/** Why the registry closes a session: the journal's close reasons. */
export const CLOSE_REASONS = {
  idle: "idle",
  clientEnded: "the client ended it",
  perUserBound: "the user opened more sessions than the bound",
  stopping: "the gateway is stopping",
  transportClosed: "its transport closed",
  initializeFailed: "its initialize failed",
} as const;

/**
 * The open MCP sessions of this gateway, bounded: per user (the least recently used one gives way), per tenant
 * (its share: one tenant cannot fill the gateway for the others), in all, and in time (idle ones are closed by a
 * sweep). A session is found only by its id together with its owner's tenant
 * and user: for anybody else it does not exist. Each session opened and closed is written to the journal: the
 * opening before the session exists (no record, no session), the closing after (a failure is logged, not thrown).
 */
export function createMcpSessions<T extends ClosableSession>(
  limits: McpSessionLimits,
  logger: Logger,
  now: () => number = Date.now,
  journal: McpSessionJournal = NO_JOURNAL,
) {
  const sessions = new Map<string, McpSession<T>>();
  /** Sessions whose opening is being written: they count against the gateway's bound. */
  let opening = 0;
  /** Each tenant's sessions, held and being opened: its share of the gateway. */
  const ofTenant = createTally();
  /** Closing records not yet written: closeAll waits for them (the store is closed after the gateway). */
  const writes = new Set<Promise<void>>();

  function recordClosed(session: McpSessionEntry, why: string): void {
    const write = journal
      .closed(session, why)
      .catch((err: unknown) => logger.warn({ err, mcp_session: session.id, why }, "an MCP session's close was not recorded"))
      .finally(() => writes.delete(write));
    writes.add(write);
  }

  function close(id: string, why: string): void {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    ofTenant.add(session.tenantId, -1);
    logger.info({ mcp_session: id, tenant_id: session.tenantId, mode: session.mode, why }, "MCP session closed");
    recordClosed(session, why);
    session.handle.close().catch((err: unknown) => logger.warn({ err, mcp_session: id }, "closing an MCP session failed"));
  }

  const sweep = setInterval(
    () => {
      const idleSince = now() - limits.idleMs;
      for (const s of [...sessions.values()]) if (s.lastUsedAt < idleSince) close(s.id, CLOSE_REASONS.idle);
    },
    Math.min(60_000, Math.max(1_000, Math.floor(limits.idleMs / 4))),
  );
  sweep.unref();

  return {
    /** Whether one more session may be opened (the gateway-wide bound, openings being written included). */
    hasRoom: () => sessions.size + opening < limits.max,
    /** Whether the tenant may open one more session (its share of the gateway, its openings being written included). */
    tenantHasRoom: (tenantId: string) => ofTenant.of(tenantId) < limits.perTenant,
    /**
     * Records a session opened in the journal, then holds it; the owner's least recently used ones are closed
     * beyond the per-user bound. Rejects (holding nothing) when the journal could not record it.
     */
    async add(session: Omit<McpSession<T>, "lastUsedAt">): Promise<void> {
      const { id, tenantId, userId, mode } = session;
      opening += 1;
      ofTenant.add(tenantId, 1);
      try {
        await journal.opened({ id, tenantId, userId, mode });
      } catch (err) {
        ofTenant.add(tenantId, -1);
        throw err;
      } finally {
        opening -= 1;
      }
      const own = [...sessions.values()].filter((s) => s.tenantId === tenantId && s.userId === userId);
      own.sort((a, b) => a.lastUsedAt - b.lastUsedAt);
      for (const s of own.slice(0, Math.max(0, own.length - limits.perUser + 1))) close(s.id, CLOSE_REASONS.perUserBound);
      sessions.set(id, { ...session, lastUsedAt: now() });
      logger.info({ mcp_session: id, tenant_id: tenantId, mode }, "MCP session opened");
    },
    /** The session with this id if it is the caller's (and marks it used); undefined otherwise, alike for all. */
    find(id: string, caller: { tenantId: string; userId: string }): McpSession<T> | undefined {
      const session = sessions.get(id);
      if (!session || session.tenantId !== caller.tenantId || session.userId !== caller.userId) return undefined;
      session.lastUsedAt = now();
      return session;
    },
    /** Forgets a session its transport closed (DELETE, or the client went away) or closes it. */
    close,
    /** Closes every session (the gateway is stopping) and the sweep; resolves once their closes are recorded (or failed). */
    async closeAll(): Promise<void> {
      clearInterval(sweep);
      for (const id of [...sessions.keys()]) close(id, CLOSE_REASONS.stopping);
      await Promise.all([...writes]);
    },
    size: () => sessions.size,
  };
}

export type McpSessions<T extends ClosableSession> = ReturnType<typeof createMcpSessions<T>>;
