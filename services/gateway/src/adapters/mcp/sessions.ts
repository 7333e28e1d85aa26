import type { Logger } from "@steward/platform";
import type { McpMode } from "../../domain/mcp-mode";

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

export interface McpSessionLimits {
  /** Open sessions one user may hold; opening one more closes their least recently used. */
  readonly perUser: number;
  /** A session unused this long is closed, in ms. */
  readonly idleMs: number;
  /** Open sessions of this gateway; beyond it a new one is refused. */
  readonly max: number;
}

/**
 * The open MCP sessions of this gateway, bounded: per user (the least recently used one gives way), in all, and
 * in time (idle ones are closed by a sweep). A session is found only by its id together with its owner's tenant
 * and user: for anybody else it does not exist.
 */
export function createMcpSessions<T extends ClosableSession>(limits: McpSessionLimits, logger: Logger, now: () => number = Date.now) {
  const sessions = new Map<string, McpSession<T>>();

  function close(id: string, why: string): void {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    logger.info({ mcp_session: id, tenant_id: session.tenantId, mode: session.mode, why }, "MCP session closed");
    session.handle.close().catch((err: unknown) => logger.warn({ err, mcp_session: id }, "closing an MCP session failed"));
  }

  const sweep = setInterval(() => {
    const idleSince = now() - limits.idleMs;
    for (const s of [...sessions.values()]) if (s.lastUsedAt < idleSince) close(s.id, "idle");
  }, Math.min(60_000, Math.max(1_000, Math.floor(limits.idleMs / 4))));
  sweep.unref();

  return {
    /** Whether one more session may be opened (the gateway-wide bound). */
    hasRoom: () => sessions.size < limits.max,
    /** Records a session; the owner's least recently used ones are closed beyond the per-user bound. */
    add(session: Omit<McpSession<T>, "lastUsedAt">): void {
      const own = [...sessions.values()].filter((s) => s.tenantId === session.tenantId && s.userId === session.userId);
      own.sort((a, b) => a.lastUsedAt - b.lastUsedAt);
      for (const s of own.slice(0, Math.max(0, own.length - limits.perUser + 1))) close(s.id, "the user opened more sessions than the bound");
      sessions.set(session.id, { ...session, lastUsedAt: now() });
      logger.info({ mcp_session: session.id, tenant_id: session.tenantId, mode: session.mode }, "MCP session opened");
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
    /** Closes every session (the gateway is stopping) and the sweep. */
    closeAll(): void {
      clearInterval(sweep);
      for (const id of [...sessions.keys()]) close(id, "the gateway is stopping");
    },
    size: () => sessions.size,
  };
}

export type McpSessions<T extends ClosableSession> = ReturnType<typeof createMcpSessions<T>>;
