import { createLogger } from "@steward/platform";
import { createMcpSessions } from "./sessions";

describe("the open MCP sessions", () => {
  let clock = 0;
  const closed: string[] = [];
  const handle = (id: string) => ({ close: async () => void closed.push(id) });
  const make = (perUser = 2, max = 3) => createMcpSessions({ perUser, idleMs: 60_000, max }, createLogger("test", "silent"), () => clock);
  const alice = { tenantId: "acme", userId: "alice" };
  const add = (s: ReturnType<typeof make>, id: string, who = alice) => s.add({ id, ...who, mode: "observe", handle: handle(id) });

  beforeEach(() => {
    clock = 0;
    closed.length = 0;
  });

  it("are found only with their owner's tenant and user", () => {
    const s = make();
    add(s, "s1");
    expect(s.find("s1", alice)?.id).toBe("s1");
    expect(s.find("s1", { tenantId: "acme", userId: "bob" })).toBeUndefined();
    expect(s.find("s1", { tenantId: "globex", userId: "alice" })).toBeUndefined();
    expect(s.find("s2", alice)).toBeUndefined();
    s.closeAll();
  });

  it("close the owner's least recently used beyond the per-user bound, and say when the gateway is full", () => {
    const s = make(2, 3);
    add(s, "s1");
    clock = 1;
    add(s, "s2");
    clock = 2;
    s.find("s1", alice);
    clock = 3;
    add(s, "s3");
    expect(closed).toEqual(["s2"]);
    expect(s.find("s1", alice)).toBeDefined();
    add(s, "b1", { tenantId: "acme", userId: "bob" });
    expect(s.hasRoom()).toBe(false);
    s.closeAll();
    expect(s.size()).toBe(0);
    expect(closed.sort()).toEqual(["b1", "s1", "s2", "s3"]);
  });
});
