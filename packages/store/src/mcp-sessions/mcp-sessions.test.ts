import { randomUUID } from "node:crypto";
import { useFreshDatabase } from "../../../../test/support/databases";
import { listMcpSessions } from "./list-sessions";
import type { McpSessionOpening } from "./mcp-session";
import { recordMcpSessionClosed } from "./record-session-closed";
import { recordMcpSessionOpened } from "./record-session-opened";

describe("the record of MCP sessions (PostgreSQL: opened, closed once, listed newest first)", () => {
  const db = useFreshDatabase("steward_store_mcp_sessions");
  const all = { page: 1, pageSize: 100 };
  const opening = (s: Partial<McpSessionOpening> = {}): McpSessionOpening => ({ id: randomUUID(), tenantId: "acme", userId: "alice", mode: "observe", ...s });

  it("records a session opened, and answers it as auditors see it", async () => {
    const s = opening({ mode: "execute" });
    expect(await recordMcpSessionOpened(db.pool, s)).toEqual({
      id: s.id,
      user_id: "alice",
      mode: "execute",
      opened_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      closed_at: null,
      close_reason: null,
    });
    // The same id again (or a mode the table does not know) is refused: nothing else written.
    await expect(recordMcpSessionOpened(db.pool, s)).rejects.toMatchObject({ code: "23505" });
    await expect(recordMcpSessionOpened(db.pool, opening({ mode: "root" as never }))).rejects.toMatchObject({ code: "23514" });
  });

  it("closes a session once: the first reason wins, another tenant cannot close it", async () => {
    const s = opening();
    await recordMcpSessionOpened(db.pool, s);
    expect(await recordMcpSessionClosed(db.pool, { id: s.id, tenantId: "globex" }, "idle")).toBe(false);
    expect(await recordMcpSessionClosed(db.pool, s, "the client ended it")).toBe(true);
    expect(await recordMcpSessionClosed(db.pool, s, "its transport closed")).toBe(false);
    expect(await recordMcpSessionClosed(db.pool, { id: randomUUID(), tenantId: "acme" }, "idle")).toBe(false);
    const [listed] = (await listMcpSessions(db.pool, "acme", {}, all)).items.filter((r) => r.id === s.id);
    expect(listed).toMatchObject({ close_reason: "the client ended it", closed_at: expect.stringMatching(/Z$/) });
    expect(Date.parse(listed.closed_at!)).toBeGreaterThanOrEqual(Date.parse(listed.opened_at));
  });

  it("lists a tenant's sessions newest first, filtered by user, mode and open, paged", async () => {
    const tenant = `t${randomUUID().slice(0, 8)}`;
    const a = opening({ tenantId: tenant, userId: "ana", mode: "observe" });
    const b = opening({ tenantId: tenant, userId: "ben", mode: "execute" });
    const c = opening({ tenantId: tenant, userId: "ana", mode: "execute" });
    for (const s of [a, b, c]) await recordMcpSessionOpened(db.pool, s);
    await recordMcpSessionOpened(db.pool, opening({ tenantId: "other", userId: "ana" }));
    await recordMcpSessionClosed(db.pool, a, "idle");

    const listed = await listMcpSessions(db.pool, tenant, {}, all);
    expect(listed.items.map((s) => s.id)).toEqual([c.id, b.id, a.id]);
    expect(listed.total).toBe(3);
    const ids = async (filter: Parameters<typeof listMcpSessions>[2]) => (await listMcpSessions(db.pool, tenant, filter, all)).items.map((s) => s.id);
    expect(await ids({ userId: "ana" })).toEqual([c.id, a.id]);
    expect(await ids({ mode: "execute" })).toEqual([c.id, b.id]);
    expect(await ids({ open: true })).toEqual([c.id, b.id]);
    expect(await ids({ open: false })).toEqual([a.id]);
    expect(await ids({ userId: "ana", mode: "execute", open: true })).toEqual([c.id]);
    expect(await ids({ userId: "zed" })).toEqual([]);
    expect(await listMcpSessions(db.pool, tenant, {}, { page: 2, pageSize: 2 })).toEqual({ items: [listed.items[2]], total: 3 });
  });
});
