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
    expect(parseCommandLine(["policies", "dry-run", "--action", "tool.invoke", "--user", "mo", "--roles", "member, admin", "--resource", "tool:save_note"]).command).toEqual({
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
