import { parseCommandLine } from "./args";
import { UsageError } from "./errors";
import { usage as usageText } from "./help";

const usage = (argv: string[]) => {
  try {
    parseCommandLine(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${argv.join(" ")} parsed`);
};
const ID = "0b9f6a3e-3c1d-4d8e-9a7b-2f6c1e0d5a4b";

describe("parseCommandLine", () => {
  it("reads run with its question, mode and --follow, and the global --json anywhere", () => {
    expect(parseCommandLine(["run", "How long", "do I have?", "--mode", "ask", "-f", "--json"])).toEqual({
      globals: { json: true },
      command: { name: "run", input: "How long do I have?", mode: "ask", follow: true },
    });
    expect(parseCommandLine(["--url", "http://h:1", "run", "q"]).globals).toEqual({ json: false, url: "http://h:1" });
  });

  it("reads the runs subcommands with their run ids (lower-cased)", () => {
    expect(parseCommandLine(["runs", "ls", "--page", "2", "--page-size", "5"]).command).toEqual({ name: "runs.ls", page: 2, pageSize: 5 });
    expect(parseCommandLine(["runs", "show", ID.toUpperCase()]).command).toEqual({ name: "runs.show", id: ID });
    expect(parseCommandLine(["runs", "events", ID, "--after", "0", "--follow"]).command).toEqual({ name: "runs.events", id: ID, follow: true, after: 0 });
    expect(parseCommandLine(["runs", "answer", ID, "EU", "please"]).command).toEqual({ name: "runs.answer", id: ID, answer: "EU please" });
    expect(parseCommandLine(["runs", "approve", ID]).command).toEqual({ name: "runs.approve", id: ID });
  });

  it("reads kb, policies, replay, dlq, login and status", () => {
    expect(parseCommandLine(["kb", "add", "faq.md", "--title", "FAQ"]).command).toEqual({ name: "kb.add", file: "faq.md", title: "FAQ" });
    expect(parseCommandLine(["policies", "activate", "3"]).command).toEqual({ name: "policies.activate", target: { version: 3 } });
    expect(parseCommandLine(["policies", "activate", "set.cedar"]).command).toEqual({ name: "policies.activate", target: { file: "set.cedar" } });
    expect(
      parseCommandLine(["policies", "dry-run", "--action", "tool.invoke", "--user", "mo", "--roles", "member, admin", "--resource", "tool:save_note"]).command,
    ).toEqual({
      name: "policies.dry-run",
      action: "tool.invoke",
      user: "mo",
      roles: ["member", "admin"],
      resource: { type: "tool", id: "save_note" },
      elevated: false,
    });
    expect(parseCommandLine(["replay", "--all-finished", "--limit", "10"]).command).toEqual({ name: "replay", ids: [], allFinished: true, limit: 10 });
    expect(parseCommandLine(["dlq", "ls"]).command).toEqual({ name: "dlq.ls", limit: 20 });
    expect(parseCommandLine(["login"]).command).toEqual({ name: "login", tokenStdin: false, tenant: "demo", user: "demo-user", roles: ["member"], ttl: "12h" });
    expect(parseCommandLine(["status"]).command).toEqual({ name: "status" });
  });

  it("answers help for no command, `help`, and --help on a command", () => {
    expect(parseCommandLine([]).command).toEqual({ name: "help" });
    expect(parseCommandLine(["runs", "--help"]).command).toEqual({ name: "help", topic: "runs" });
    expect(parseCommandLine(["run", "-h"]).command).toEqual({ name: "help", topic: "run" });
  });

  it("refuses what it cannot take, naming the problem", () => {
    expect(usage(["launch"])).toBe("unknown command: launch");
    expect(usage(["runs", "list"])).toMatch(/runs takes one of: ls, show/);
    expect(usage(["run"])).toMatch(/run needs a question/);
    expect(usage(["run", "q", "--mode", "chat"])).toBe("--mode is agent or ask");
    expect(usage(["runs", "ls", "--follow"])).toBe("--follow does not go with `runs ls`");
    expect(usage(["runs", "ls", "--page-size", "101"])).toMatch(/--page-size must be a whole number from 1 to 100/);
    expect(usage(["runs", "show", "42"])).toBe("not a run id: 42");
    expect(usage(["runs", "answer", ID])).toMatch(/needs the answer/);
    expect(usage(["replay"])).toMatch(/run ids or --all-finished/);
    expect(usage(["replay", ID, "--all-finished"])).toMatch(/not both/);
    expect(usage(["login", "--token-stdin", "--user", "x"])).toMatch(/--token-stdin stores a given token/);
    expect(usage(["policies", "dry-run", "--action", "a"])).toMatch(/--action and --user/);
    expect(usage(["run", "q", "--url", "ftp://x"])).toMatch(/--url must be/);
  });

  it("leaves unknown options to node's parser (a usage error too)", () => {
    expect(() => parseCommandLine(["runs", "ls", "--pages", "2"])).toThrow(expect.objectContaining({ code: "ERR_PARSE_ARGS_UNKNOWN_OPTION" }));
  });
});

describe("help", () => {
  it("shows a command's own lines, and everything for an unknown topic", () => {
    const usage = usageText;
    expect(usage("run")).toMatch(/^ {2}steward run "question"/);
    expect(usage("run")).not.toContain("runs ls");
    expect(usage("runs").split("\n").filter(Boolean)).toHaveLength(7);
    expect(usage("nope")).toBe(usage());
  });
});

const THREAD = "0b9c2a9e-6a51-4c1e-9d3e-2f4b8a1c7d10";
const RUN = "5f1d6c1e-1b2a-4c3d-8e9f-a0b1c2d3e4f5";

describe("the command line of threads, proposals and the admins' run view", () => {
  it("continues a thread with run --thread", () => {
    expect(parseCommandLine(["run", "and", "then?", "--thread", THREAD.toUpperCase()]).command).toEqual({
      name: "run",
      input: "and then?",
      mode: "agent",
      follow: false,
      threadId: THREAD,
    });
    expect(() => parseCommandLine(["run", "q", "--thread", "nope"])).toThrow("not a thread id: nope");
  });

  it("reads the threads commands", () => {
    expect(parseCommandLine(["threads", "new", "--title", "Refunds"]).command).toEqual({ name: "threads.new", title: "Refunds" });
    expect(parseCommandLine(["threads", "ls", "--page", "2"]).command).toEqual({ name: "threads.ls", page: 2, pageSize: 20 });
    expect(parseCommandLine(["threads", "fork", THREAD, "--at", RUN]).command).toEqual({ name: "threads.fork", id: THREAD, atRunId: RUN });
    expect(parseCommandLine(["threads", "archive", THREAD]).command).toEqual({ name: "threads.archive", id: THREAD });
    expect(() => parseCommandLine(["threads", "fork", THREAD])).toThrow("--at");
    expect(() => parseCommandLine(["threads", "show", THREAD, "--at", RUN])).toThrow("--at does not go with `threads show`");
  });

  it("reads the proposals commands", () => {
    expect(parseCommandLine(["proposals", "ls", "--status", "pending", "--all"]).command).toEqual({
      name: "proposals.ls",
      page: 1,
      pageSize: 20,
      status: "pending",
      all: true,
    });
    expect(parseCommandLine(["proposals", "apply", RUN]).command).toEqual({ name: "proposals.apply", id: RUN });
    expect(() => parseCommandLine(["proposals", "ls", "--status", "open"])).toThrow("--status is one of: pending, applied, dismissed");
    expect(() => parseCommandLine(["proposals", "dismiss"])).toThrow(UsageError);
  });

  it("reads the admins' run list filters as the route's query keys", () => {
    const cmd = parseCommandLine([
      "admin",
      "runs",
      "--user",
      "bob",
      "--state",
      "failed",
      "--code",
      "60405",
      "--thread",
      THREAD,
      "--since",
      "2026-12-01T00:00:00Z",
    ]).command;
    expect(cmd).toEqual({
      name: "admin.runs",
      page: 1,
      pageSize: 20,
      filters: { user: "bob", state: "failed", code: "60405", thread_id: THREAD, created_after: "2026-12-01T00:00:00Z" },
    });
    expect(() => parseCommandLine(["admin", "runs", "--state", "done"])).toThrow("--state is one of");
    expect(() => parseCommandLine(["admin", "runs", "--until", "yesterday"])).toThrow("--until must be a day or a date and time with its zone");
    expect(() => parseCommandLine(["admin", "runs", "--since", "2026-12-01T09:00:00"])).toThrow("with its zone");
    expect(parseCommandLine(["admin", "runs", "--until", "2026-12-02"]).command).toMatchObject({ filters: { created_before: "2026-12-02" } });
    expect(() => parseCommandLine(["admin", "runs", "--code", "ASK_MODE_DENIED"])).toThrow("--code is a run's error code");
    expect(parseCommandLine(["admin", "events", RUN]).command).toEqual({ name: "admin.events", id: RUN });
  });
});

describe("the stdio MCP entry", () => {
  it("takes a mode, observe by default", () => {
    expect(parseCommandLine(["mcp"]).command).toEqual({ name: "mcp", mode: "observe" });
    expect(parseCommandLine(["mcp", "--mode", "execute"]).command).toEqual({ name: "mcp", mode: "execute" });
    expect(() => parseCommandLine(["mcp", "--mode", "root"])).toThrow("--mode is one of: observe, execute, admin");
    expect(() => parseCommandLine(["mcp", "extra"])).toThrow(UsageError);
  });
});

describe("the audit commands", () => {
  const SESSION = "7d3c1a52-9f0e-4b8a-8c61-2f4e5d6a7b8c";
  it("read the decision log's filters and the MCP session list's, as the routes' query keys", () => {
    expect(parseCommandLine(["audit", "decisions", "--mcp-session", SESSION.toUpperCase()]).command).toEqual({
      name: "audit.decisions",
      after: 0,
      limit: 100,
      mcpSessionId: SESSION,
    });
    expect(parseCommandLine(["audit", "decisions", "--run", RUN, "--after", "42", "--limit", "10"]).command).toEqual({
      name: "audit.decisions",
      after: 42,
      limit: 10,
      runId: RUN,
    });
    expect(() => parseCommandLine(["audit", "decisions", "--mcp-session", "abc"])).toThrow("not a session id: abc");
    expect(() => parseCommandLine(["audit", "decisions", "--limit", "1001"])).toThrow("--limit must be a whole number from 1 to 1000");
    expect(parseCommandLine(["audit", "mcp-sessions", "--user", "mo", "--open"]).command).toEqual({
      name: "audit.mcp-sessions",
      page: 1,
      pageSize: 20,
      user: "mo",
      open: true,
    });
    expect(parseCommandLine(["audit", "mcp-sessions"]).command).toEqual({ name: "audit.mcp-sessions", page: 1, pageSize: 20, open: false });
    expect(() => parseCommandLine(["audit", "mcp-sessions", "--run", RUN])).toThrow("--run does not go with `audit mcp-sessions`");
    expect(() => parseCommandLine(["audit", "runs"])).toThrow("audit takes one of: decisions, mcp-sessions (not runs)");
  });
});
