import { createLogger, type Logger } from "@steward/platform";
import { createMcpSessions, type McpSessionEntry, type McpSessionJournal } from "./sessions";

describe("the open MCP sessions", () => {
  let clock = 0;
  const closed: string[] = [];
  const handle = (id: string) => ({ close: async () => void closed.push(id) });
  const make = (perUser = 2, max = 3, journal?: McpSessionJournal, logger: Logger = createLogger("test", "silent"), perTenant = 100) =>
    createMcpSessions({ perUser, idleMs: 60_000, max, perTenant }, logger, () => clock, journal);
  const alice = { tenantId: "acme", userId: "alice" };
  const add = (s: ReturnType<typeof make>, id: string, who = alice) => s.add({ id, ...who, mode: "observe", handle: handle(id) });

  /** A journal that keeps what it was told, in order; `failOpen` makes the next opening fail. */
  function journal() {
    const told: Array<["opened", McpSessionEntry] | ["closed", string, string]> = [];
    let failOpen = false;
    let failClose = false;
    const j: McpSessionJournal = {
      opened: async (s) => {
        if (failOpen) throw new Error("the store is away");
        told.push(["opened", s]);
      },
      closed: async (s, why) => {
        if (failClose) throw new Error("the store is away");
        told.push(["closed", s.id, why]);
      },
    };
    return { j, told, failOpens: () => void (failOpen = true), failCloses: () => void (failClose = true) };
  }

  beforeEach(() => {
    clock = 0;
    closed.length = 0;
  });

  it("are found only with their owner's tenant and user", async () => {
    const s = make();
    await add(s, "s1");
    expect(s.find("s1", alice)?.id).toBe("s1");
    expect(s.find("s1", { tenantId: "acme", userId: "bob" })).toBeUndefined();
    expect(s.find("s1", { tenantId: "globex", userId: "alice" })).toBeUndefined();
    expect(s.find("s2", alice)).toBeUndefined();
    await s.closeAll();
  });

  it("close the owner's least recently used beyond the per-user bound, and say when the gateway is full", async () => {
    const s = make(2, 3);
    await add(s, "s1");
    clock = 1;
    await add(s, "s2");
    clock = 2;
    s.find("s1", alice);
    clock = 3;
    await add(s, "s3");
    expect(closed).toEqual(["s2"]);
    expect(s.find("s1", alice)).toBeDefined();
    await add(s, "b1", { tenantId: "acme", userId: "bob" });
    expect(s.hasRoom()).toBe(false);
    await s.closeAll();
    expect(s.size()).toBe(0);
    expect(closed.sort()).toEqual(["b1", "s1", "s2", "s3"]);
  });

  it("give each tenant its share: a tenant at its bound is refused, another tenant still opens; openings in flight count", async () => {
    const s = make(10, 100, undefined, undefined, 2);
    await add(s, "a1");
    await add(s, "a2", { tenantId: "acme", userId: "bob" });
    expect([s.tenantHasRoom("acme"), s.tenantHasRoom("globex"), s.hasRoom()]).toEqual([false, true, true]);
    await add(s, "g1", { tenantId: "globex", userId: "gil" });
    expect(s.tenantHasRoom("globex")).toBe(true);
    // An opening still being recorded counts against its tenant.
    let release!: () => void;
    const slow = createMcpSessions({ perUser: 10, idleMs: 60_000, max: 100, perTenant: 1 }, createLogger("test", "silent"), () => clock, {
      opened: () => new Promise<void>((resolve) => (release = resolve)),
      closed: async () => undefined,
    });
    const pending = add(slow, "p1");
    expect(slow.tenantHasRoom("acme")).toBe(false);
    release();
    await pending;
    expect(slow.tenantHasRoom("acme")).toBe(false);
    slow.close("p1", "the client ended it");
    expect(slow.tenantHasRoom("acme")).toBe(true);
    await slow.closeAll();
    await s.closeAll();
  });

  it("record each session opened before holding it, and each close once with the registry's reason", async () => {
    const { j, told } = journal();
    const s = make(1, 10, j);
    await add(s, "s1");
    expect(told).toEqual([["opened", { id: "s1", tenantId: "acme", userId: "alice", mode: "observe" }]]);
    await add(s, "s2");
    s.close("s2", "the client ended it");
    s.close("s2", "its transport closed");
    await add(s, "b1", { tenantId: "acme", userId: "bob" });
    await s.closeAll();
    expect(told.filter((t) => t[0] === "closed")).toEqual([
      ["closed", "s1", "the user opened more sessions than the bound"],
      ["closed", "s2", "the client ended it"],
      ["closed", "b1", "the gateway is stopping"],
    ]);
  });

  it("hold no session whose opening could not be recorded, and only log a close that could not be", async () => {
    const { j, told, failOpens, failCloses } = journal();
    const warned: string[] = [];
    const logger = createLogger("test", "silent");
    logger.warn = ((_: unknown, message: string) => void warned.push(message)) as Logger["warn"];
    const s = make(2, 3, j, logger);
    await add(s, "s1");
    failOpens();
    await expect(add(s, "s2")).rejects.toThrow("the store is away");
    expect(s.find("s2", alice)).toBeUndefined();
    expect([s.size(), s.hasRoom()]).toEqual([1, true]);
    // The failed opening closed nobody for the per-user bound either.
    expect(closed).toEqual([]);

    failCloses();
    s.close("s1", "the client ended it");
    await s.closeAll();
    expect(s.find("s1", alice)).toBeUndefined();
    expect(closed).toEqual(["s1"]);
    expect(warned).toEqual(["an MCP session's close was not recorded"]);
    expect(told).toEqual([["opened", expect.objectContaining({ id: "s1" })]]);
  });
});
