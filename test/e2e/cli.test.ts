import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream } from "@nats-io/jetstream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { jwtVerify } from "jose";
import { busNames } from "@steward/contract";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type FakeOpenAi } from "../support/fake-openai";
import { scenarioModel } from "../support/scenario-model";
import { eventsOf } from "../support/runs";
import { waitFor } from "../support/wait-for";

jest.setTimeout(180_000);

// The `steward` CLI, spawned as a user would run it (its bin), against the four services as real processes.
const BIN = join(__dirname, "..", "..", "apps", "cli", "bin", "steward.mjs");

/** The model: the first word of the input picks the scenario (test/support/scenario-model.ts). */
const script = scenarioModel("You have 30 days to ask for a refund.");

interface Spawned {
  /** Resolves once stdout (or stderr) matches, within a bound. */
  waitFor(pattern: RegExp, stream?: "stdout" | "stderr"): Promise<void>;
  write(text: string): void;
  /** Closes the CLI's stdin. */
  end(): void;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

describe("the steward CLI against a running platform", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let member: string;
  let admin: string;
  let dir: string;

  /** The CLI's environment: the platform's URL and a token, no config file, no colour. */
  const envFor = (token: string | undefined, extra: Record<string, string> = {}) => {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: dir,
      STEWARD_URL: platform.gatewayUrl,
      STEWARD_CONFIG: join(dir, "absent.json"),
      STEWARD_HOME: join(dir, "home"),
      NO_COLOR: "1",
      ...extra,
    };
    if (token) env.STEWARD_TOKEN = token;
    return env;
  };

  function start(args: string[], env: Record<string, string>): Spawned {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    const out = { stdout: "", stderr: "" };
    const watchers: Array<() => void> = [];
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out.stdout += c;
      watchers.forEach((w) => w());
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      out.stderr += c;
      watchers.forEach((w) => w());
    });
    const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on("close", (code) => resolve({ code, ...out })));
    return {
      done,
      write: (text) => child.stdin.write(text),
      end: () => child.stdin.end(),
      waitFor: (pattern, stream = "stdout") =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no ${pattern} on ${stream} within 30 s:\n${out.stdout}\n${out.stderr}`)), 30_000);
          const check = () => {
            if (!pattern.test(out[stream])) return;
            clearTimeout(timer);
            resolve();
          };
          watchers.push(check);
          check();
          void done.then(() => {
            check();
            reject(new Error(`the CLI ended without ${pattern} on ${stream}:\n${out.stdout}\n${out.stderr}`));
          });
        }),
    };
  }

  /** Runs the CLI to its end (stdin closed, or given), bounded by the test's timeout. */
  async function cli(args: string[], token: string | undefined, options: { stdin?: string; env?: Record<string, string> } = {}) {
    const spawned = start(args, envFor(token, options.env));
    if (options.stdin) spawned.write(options.stdin);
    spawned.end();
    return spawned.done;
  }
  const ndjson = (text: string) =>
    text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  const stateOf = async (id: string) => (await platform.http("GET", `/v1/agents/runs/${id}`, { token: member })).body.state as string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "steward-cli-e2e-"));
    model = await startFakeOpenAi(script);
    // acme's administrators are the platform's operators here: `steward status` shows the whole platform.
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake", STEWARD_OPERATOR_TENANT: "acme" });
    member = await platform.token({ tenant: "acme", user: "mo" });
    admin = await platform.token({ tenant: "acme", user: "ada", roles: ["admin", "member"] });
  });

  afterAll(async () => {
    await platform?.teardown();
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("run --follow renders the run live (tool call, policy decision, result, answer) and exits 0", async () => {
    const r = await cli(["run", "refund window?", "--follow"], member);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^run [0-9a-f-]{36}\n/);
    expect(r.stdout).toContain("queued (agent mode): refund window?");
    expect(r.stdout).toContain('→ knowledge_search {"query":"refund"}');
    expect(r.stdout).toMatch(/policy knowledge\.document\.read: permit by member-knowledge-read/);
    expect(r.stdout).toContain("← knowledge_search: ok");
    expect(r.stdout).toContain("You have 30 days to ask for a refund.\n✓ succeeded");
  });

  it("run --follow --json prints one JSON object per event, the snapshot first and the terminal event last", async () => {
    const r = await cli(["run", "refund again", "--follow", "--json"], member);
    expect(r.code).toBe(0);
    const lines = ndjson(r.stdout);
    expect(lines[0]).toMatchObject({ type: "snapshot", data: { state: "queued", input: "refund again" } });
    const stored = lines.filter((l) => typeof l.seq === "number");
    expect(stored.map((l) => l.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(stored.map((l) => l.type)).toEqual(expect.arrayContaining(["run.queued", "run.started", "tool_call", "tool.decided", "tool_result", "message"]));
    expect(lines[lines.length - 1]).toMatchObject({ type: "run.succeeded", data: { output: { text: "You have 30 days to ask for a refund." } } });
    const events = await eventsOf(platform, member, lines[0].data.id);
    expect(stored.map((l) => l.type)).toEqual(events.map((e) => e.type));
  });

  it("a question is answered in place with a line typed on stdin (2 picks the second option)", async () => {
    const s = start(["run", "region please", "--follow"], envFor(member));
    await s.waitFor(/\? Which region\?\n {2}1\. EU\n {2}2\. US\n/);
    await s.waitFor(/answer \(1-2 or text\)> /, "stderr");
    s.write("2\n");
    const r = await s.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("answered: US");
    expect(r.stdout).toContain("region is US");
  });

  it("an approval is asked for in place, shows the call, and approving runs the tool", async () => {
    const s = start(["run", "note a", "--follow"], envFor(member));
    await s.waitFor(/! approval needed: save_note \{"title":"Note note a","body":"We ship on Friday\."\}/);
    await s.waitFor(/approve\? \[y\/n\]> /, "stderr");
    s.write("yes\n");
    const r = await s.done;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("  approved");
    expect(r.stdout).toContain("← save_note: ok");
    expect(r.stdout).toContain("note ok");
  });

  it("runs ls/show/events/cancel with --json; answering a cancelled run is refused (exit 3)", async () => {
    const created = await cli(["run", "wait for me", "--json"], member);
    expect(created.code).toBe(0);
    const run = JSON.parse(created.stdout);
    expect(run).toMatchObject({ state: "queued", input: "wait for me" });
    await waitFor(async () => ((await stateOf(run.id)) === "awaiting_input" ? true : undefined), { what: "the run to ask" });

    const ls = await cli(["runs", "ls", "--json", "--page-size", "100"], member);
    expect(ls.code).toBe(0);
    expect(JSON.parse(ls.stdout).items.map((r: { id: string }) => r.id)).toContain(run.id);
    const show = await cli(["runs", "show", run.id, "--json"], member);
    expect(JSON.parse(show.stdout)).toMatchObject({ id: run.id, state: "awaiting_input" });

    const cancel = await cli(["runs", "cancel", run.id, "--json"], member);
    expect(cancel.code).toBe(0);
    expect(JSON.parse(cancel.stdout).id).toBe(run.id);
    await waitFor(async () => ((await stateOf(run.id)) === "cancelled" ? true : undefined), { what: "the run to be cancelled" });

    const events = await cli(["runs", "events", run.id, "--json"], member);
    expect(events.code).toBe(0);
    const types = ndjson(events.stdout).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["run.queued", "ask_user", "run.cancel_requested", "run.cancelled"]));
    expect(types[types.length - 1]).toBe("run.cancelled");

    const late = await cli(["runs", "answer", run.id, "too late"], member);
    expect(late.code).toBe(3);
    expect(late.stderr).toMatch(/409 \/ 10090/);
    const followed = await cli(["runs", "events", run.id, "--follow"], member);
    expect(followed.code).toBe(1);
    expect(followed.stdout).toContain("✗ cancelled");
  });

  it("kb add, ls and rm (an administrator); removing it again is a 404 (exit 3)", async () => {
    const file = join(dir, "shipping.md");
    writeFileSync(file, "# Shipping\nParcels leave the warehouse within two days.\n");
    const added = await cli(["kb", "add", file, "--json"], admin);
    expect(added.code).toBe(0);
    const doc = JSON.parse(added.stdout);
    expect(doc).toMatchObject({ title: "shipping" });
    const listed = await cli(["kb", "ls", "--json"], admin);
    expect(JSON.parse(listed.stdout).items.map((d: { id: string }) => d.id)).toContain(doc.id);
    const human = await cli(["kb", "ls"], admin);
    expect(human.stdout).toMatch(new RegExp(`${doc.id}.*shipping`));
    expect((await cli(["kb", "rm", doc.id], admin)).code).toBe(0);
    expect(JSON.parse((await cli(["kb", "ls", "--json"], admin)).stdout).items.map((d: { id: string }) => d.id)).not.toContain(doc.id);
    const again = await cli(["kb", "rm", doc.id], admin);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/404/);
    const missing = await cli(["kb", "add", join(dir, "nope.md")], admin);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.md: ENOENT/);
  });

  it("threads: new, a run in it with --thread, show, fork at the run, ls, archive", async () => {
    const created = await cli(["threads", "new", "--title", "Refund questions", "--json"], member);
    expect(created.code).toBe(0);
    const thread = JSON.parse(created.stdout);
    expect(thread).toMatchObject({ title: "Refund questions", run_count: 0 });
    const first = await cli(["run", "refund in a thread", "--thread", thread.id, "--follow"], member);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("✓ succeeded");
    const shown = await cli(["threads", "show", thread.id, "--json"], member);
    const view = JSON.parse(shown.stdout);
    expect(view.runs.map((r: { input: string }) => r.input)).toEqual(["refund in a thread"]);
    const runId = view.runs[0].id as string;
    const human = await cli(["threads", "show", thread.id], member);
    expect(human.stdout).toMatch(new RegExp(`${runId}\\s+succeeded`));
    const forked = await cli(["threads", "fork", thread.id, "--at", runId, "--json"], member);
    expect(forked.code).toBe(0);
    const fork = JSON.parse(forked.stdout);
    expect(fork).toMatchObject({ forked_from: { thread_id: thread.id, run_id: runId } });
    const listed = JSON.parse((await cli(["threads", "ls", "--json"], member)).stdout);
    expect(listed.items.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining([thread.id, fork.id]));
    expect((await cli(["threads", "archive", thread.id], member)).stdout).toBe(`archived ${thread.id}\n`);
    const refused = await cli(["run", "refund again", "--thread", thread.id], member);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/409 \/ 10090/);
    const others = await cli(["threads", "show", fork.id], admin);
    expect(others.code).toBe(3);
    expect(others.stderr).toMatch(/404 \/ 10050/);
  });

  it("proposals: a run proposes knowledge, the member lists and applies it, the document exists", async () => {
    const thread = JSON.parse((await cli(["threads", "new", "--json"], member)).stdout);
    const run = await cli(["run", "propose Parcels to Iceland ship on Tuesdays.", "--thread", thread.id, "--follow"], member);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("proposal ok");
    const pending = JSON.parse((await cli(["proposals", "ls", "--status", "pending", "--json"], member)).stdout);
    const proposal = pending.items.find((p: { thread_id: string }) => p.thread_id === thread.id);
    expect(proposal).toMatchObject({ content: "Parcels to Iceland ship on Tuesdays.", status: "pending", proposed_by: "mo" });
    expect((await cli(["proposals", "ls"], member)).stdout).toContain(proposal.id);
    const applied = await cli(["proposals", "apply", proposal.id, "--json"], member);
    expect(applied.code).toBe(0);
    const document = JSON.parse(applied.stdout).document_id as string;
    expect(document).toMatch(/^[0-9a-f-]{36}$/);
    expect((await platform.http("GET", `/v1/knowledge/documents/${document}`, { token: member })).body).toMatchObject({ id: document });
    const again = await cli(["proposals", "dismiss", proposal.id], member);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/409 \/ 10090/);
  });

  it("admin runs, show and events: an administrator reads another user's run; a member is refused (exit 3)", async () => {
    const created = JSON.parse((await cli(["run", "an ordinary question", "--json"], member)).stdout);
    await waitFor(async () => ((await stateOf(created.id)) === "succeeded" ? true : undefined), { what: "the run to succeed" });
    const listed = JSON.parse((await cli(["admin", "runs", "--user", "mo", "--state", "succeeded", "--page-size", "100", "--json"], admin)).stdout);
    expect(listed.items.find((r: { id: string }) => r.id === created.id)).toMatchObject({ created_by: "mo", state: "succeeded" });
    expect(listed.items.every((r: { created_by: string; state: string }) => r.created_by === "mo" && r.state === "succeeded")).toBe(true);
    const human = await cli(["admin", "runs", "--user", "mo"], admin);
    expect(human.stdout).toMatch(new RegExp(`${created.id}\\s+mo\\s+succeeded`));
    expect(JSON.parse((await cli(["admin", "show", created.id, "--json"], admin)).stdout)).toMatchObject({ id: created.id, created_by: "mo" });
    const events = ndjson((await cli(["admin", "events", created.id, "--json"], admin)).stdout);
    expect(events.map((e) => e.type)).toEqual((await eventsOf(platform, member, created.id)).map((e) => e.type));
    const refused = await cli(["admin", "runs"], member);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/403 \/ 10031/);
  });

  it("mcp bridges a local stdio MCP client to the gateway's /mcp: the catalogue, a question answered, a refused token", async () => {
    const client = new Client({ name: "cli-e2e", version: "1.0.0" });
    const stderr: string[] = [];
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "--mode", "execute"], env: envFor(member), stderr: "pipe" });
    transport.stderr?.on("data", (c: Buffer) => stderr.push(c.toString()));
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(expect.arrayContaining(["run_question", "approve_call", "search_capabilities"]));
      const answered = await client.callTool({ name: "run_question", arguments: { input: "refund over mcp?" } });
      expect(JSON.stringify(answered.content)).toContain("You have 30 days to ask for a refund.");
      // A capability invoked over stdio runs as over HTTP: a run without a model, its result answered.
      const invoked = await client.callTool({
        name: "invoke_capability",
        arguments: { capability_id: "tool:knowledge_search", arguments: { query: "refund" } },
      });
      expect(invoked.isError).toBeUndefined();
      expect(invoked.structuredContent).toMatchObject({ state: "succeeded", capability_id: "tool:knowledge_search", result_code: "ok" });
    } finally {
      await client.close();
    }
    expect(stderr.join("")).toContain("execute mode");
    expect(stderr.join("")).not.toContain(member);

    // A token the gateway refuses: the client's initialize gets an error (not a hang), the token is never printed.
    const refused = new Client({ name: "cli-e2e", version: "1.0.0" });
    const bad = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp"], env: envFor("not-a-token"), stderr: "pipe" });
    const badErr: string[] = [];
    bad.stderr?.on("data", (c: Buffer) => badErr.push(c.toString()));
    await expect(refused.connect(bad)).rejects.toThrow(/401/);
    await refused.close();
    expect(badErr.join("")).toMatch(/401/);
    expect(badErr.join("")).not.toContain("not-a-token");
  });

  it("audit mcp-sessions lists a session opened over /mcp with when and why it closed; audit decisions --mcp-session shows what it did", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "cli-e2e", version: "1" } },
    };
    const headers = {
      authorization: `Bearer ${member}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "steward-mcp-mode": "observe",
    };
    const opened = await fetch(`${platform.gatewayUrl}/mcp`, { method: "POST", headers, body: JSON.stringify(init) });
    await opened.text();
    const session = opened.headers.get("mcp-session-id")!;
    expect([opened.status, session]).toEqual([200, expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    const open = JSON.parse((await cli(["audit", "mcp-sessions", "--user", "mo", "--open", "--json"], admin)).stdout);
    expect(open.items).toContainEqual(expect.objectContaining({ id: session, user_id: "mo", mode: "observe", closed_at: null }));
    const ended = await fetch(`${platform.gatewayUrl}/mcp`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${member}`, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
    });
    expect(ended.status).toBe(200);
    const closed = await waitFor(
      async () => {
        const page = JSON.parse((await cli(["audit", "mcp-sessions", "--user", "mo", "--json"], admin)).stdout);
        return page.items.find((s: { id: string; closed_at: string | null }) => s.id === session && s.closed_at);
      },
      { what: "the session's close recorded", intervalMs: 200 },
    );
    expect(closed.close_reason).toBe("the client ended it");
    const human = await cli(["audit", "mcp-sessions", "--user", "mo"], admin);
    expect(human.stdout).toMatch(new RegExp(`${session}\\s+mo\\s+observe .*\\(the client ended it\\)`));

    const decisions = JSON.parse((await cli(["audit", "decisions", "--mcp-session", session, "--json"], admin)).stdout);
    expect(decisions.items).toEqual([
      expect.objectContaining({ action: "agent.mcp.session", user_id: "mo", mcp_session_id: session, mcp_mode: "observe", permit: true }),
    ]);
    expect((await cli(["audit", "decisions", "--mcp-session", session], admin)).stdout).toContain(`${session.slice(-8)} observe`);
    const refused = await cli(["audit", "mcp-sessions"], member);
    expect(refused.code).toBe(3);
  });

  it("policies ls and validate (0 when valid, 1 with the issues when not); a member is refused (exit 3)", async () => {
    const ls = await cli(["policies", "ls", "--json"], admin);
    expect(ls.code).toBe(0);
    expect(JSON.parse(ls.stdout).items).toEqual(expect.arrayContaining([expect.objectContaining({ version: 1, status: "active" })]));
    const good = join(dir, "good.cedar");
    writeFileSync(good, readFileSync(join(__dirname, "..", "..", "infra", "policies", "default.cedar"), "utf8"));
    const valid = await cli(["policies", "validate", good], admin);
    expect(valid.code).toBe(0);
    expect(valid.stdout).toMatch(/^valid: \d+ policies/);
    const bad = join(dir, "bad.cedar");
    writeFileSync(bad, '@id("broken")\npermit (principal, action == Steward::Action::"no.such.action", resource);\n');
    const invalid = await cli(["policies", "validate", bad, "--json"], admin);
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout)).toMatchObject({ valid: false, issues: [expect.objectContaining({ message: expect.any(String) })] });
    const permit = await cli(
      ["policies", "dry-run", "--action", "knowledge.document.write", "--user", "mo", "--roles", "member", "--resource", "tool:save_note", "--json"],
      admin,
    );
    expect(permit.code).toBe(0);
    expect(JSON.parse(permit.stdout)).toMatchObject({ permit: true, policy_ids: ["member-save-notes"] });
    const deny = await cli(
      ["policies", "dry-run", "--action", "policy.admin", "--user", "mo", "--roles", "member", "--resource", "resource:policy.admin"],
      admin,
    );
    expect(deny.code).toBe(1);
    expect(deny.stdout).toMatch(/^deny/);

    const activated = await cli(["policies", "activate", good, "--json"], admin);
    expect(activated.code).toBe(0);
    const active = JSON.parse(activated.stdout);
    expect(active).toMatchObject({ status: "active", version: expect.any(Number) });
    expect(active.version).toBeGreaterThan(1);
    const after = JSON.parse((await cli(["policies", "ls", "--json"], admin)).stdout).items as Array<{ version: number; status: string }>;
    expect(after.filter((p) => p.status === "active").map((p) => p.version)).toEqual([active.version]);

    const refused = await cli(["policies", "ls"], member);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/403 \/ 10031/);
  });

  it("status shows the platform (an administrator); exit 0 when whole, 1 when degraded", async () => {
    const r = await cli(["status", "--json"], admin);
    const status = JSON.parse(r.stdout);
    expect(status.dependencies).toEqual(expect.objectContaining({ postgres: expect.anything(), nats: expect.anything() }));
    expect(r.code).toBe(status.status === "ok" ? 0 : 1);
    const human = await cli(["status"], admin);
    expect(human.stdout).toMatch(/^Steward at http:\/\/127\.0\.0\.1:\d+: (ok|degraded)/);
  });

  it("a token the gateway refuses is exit 3 with the problem, and the token is never printed", async () => {
    const forged = `${member.slice(0, member.lastIndexOf(".") + 1)}${"A".repeat(43)}`;
    const r = await cli(["runs", "ls"], forged);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/401 \/ 10011/);
    expect(r.stderr).toMatch(/steward login/);
    for (const text of [r.stdout, r.stderr]) {
      expect(text).not.toContain(forged);
      expect(text).not.toContain(forged.split(".")[2]);
    }
  });

  it("a platform that cannot be reached is exit 4", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const r = await cli(["runs", "ls"], member, { env: { STEWARD_URL: `http://127.0.0.1:${port}` } });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(new RegExp(`cannot reach Steward at http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`));
  });

  it("login --token-stdin keeps the token in a private config file that later commands use; token prints it", async () => {
    const config = join(dir, "config", "steward.json");
    const env = { STEWARD_CONFIG: config };
    const login = await cli(["login", "--token-stdin"], undefined, { stdin: `${member}\n`, env });
    expect(login.code).toBe(0);
    expect(login.stdout).toContain("logged in as mo in tenant acme (member)");
    expect(login.stdout + login.stderr).not.toContain(member);
    expect(statSync(config).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(config, "utf8")).token).toBe(member);
    const ls = await cli(["runs", "ls", "--json"], undefined, { env });
    expect(ls.code).toBe(0);
    expect(JSON.parse(ls.stdout)).toMatchObject({ page: 1, items: expect.any(Array) });
    const token = await cli(["token"], undefined, { env });
    expect(token.stdout).toBe(`${member}\n`);
    const none = await cli(["runs", "ls"], undefined);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no token: set STEWARD_TOKEN, or run `steward login`/);
  });

  it("login mints a development token as `npm run token` does; without any token the development secret mints one", async () => {
    const home = join(dir, "dev-home");
    const config = join(dir, "dev-config.json");
    const env = { STEWARD_HOME: home, STEWARD_CONFIG: config };
    const login = await cli(["login", "--tenant", "acme", "--user", "lin", "--roles", "member,admin", "--ttl", "2h", "--json"], undefined, { env });
    expect(login.code).toBe(0);
    expect(JSON.parse(login.stdout)).toMatchObject({ tenant: "acme", user: "lin", roles: ["member", "admin"], config });
    const secret = new TextEncoder().encode(readFileSync(join(home, "dev-jwt-secret"), "utf8").trim());
    const stored = JSON.parse(readFileSync(config, "utf8")).token as string;
    const { payload } = await jwtVerify(stored, secret);
    expect(payload).toMatchObject({ sub: "lin", tid: "acme", roles: ["member", "admin"] });
    expect((payload.exp as number) - (payload.iat as number)).toBe(7200);

    // No STEWARD_TOKEN and no config file, but the development secret is there: a demo token is minted.
    const implicit = await cli(["token", "--json"], undefined, { env: { STEWARD_HOME: home } });
    expect(implicit.code).toBe(0);
    const shown = JSON.parse(implicit.stdout);
    expect(shown).toMatchObject({ source: "development", tenant: "demo", user: "demo-user", roles: ["member"] });
    await expect(jwtVerify(shown.token, secret)).resolves.toBeDefined();
  });

  it("replay re-drives a finished run from its events (DATABASE_URL) and finds it the same", async () => {
    const followed = await cli(["run", "refund to replay", "--follow", "--json"], member);
    expect(followed.code).toBe(0);
    const finished = ndjson(followed.stdout)[0].data as { id: string };
    const r = await cli(["replay", finished.id, "--json"], member, { env: { DATABASE_URL: platform.databaseUrl } });
    expect(r.code).toBe(0);
    expect(ndjson(r.stdout)).toEqual([
      { type: "run", run_id: finished.id, recorded_state: "succeeded", verdict: "same" },
      { type: "summary", runs: 1, same: 1, diverged: 0, unfinished: 0, missing: 0 },
    ]);
  });

  it("dlq ls lists the dead letters from NATS with their reasons", async () => {
    const names = busNames(platform.namespace);
    const nc = await platform.nats();
    const env = { NATS_URL: "nats://127.0.0.1:4222", STEWARD_NATS_NAMESPACE: platform.namespace };
    const empty = await cli(["dlq", "ls"], undefined, { env });
    expect(empty.code).toBe(0);
    expect(empty.stdout).toMatch(/^no dead letters in /);
    const poison = { run_id: "00000000-0000-4000-8000-0000000000cc", tenant_id: "acme", created_by: "mo", prompt: "not allowed here" };
    await jetstream(nc).publish(names.runRequested, JSON.stringify(poison));
    const listed = await waitFor(
      async () => {
        const r = await cli(["dlq", "ls", "--json"], undefined, { env });
        return JSON.parse(r.stdout).items.length > 0 ? r : undefined;
      },
      { what: "the poison message to be dead-lettered", intervalMs: 200 },
    );
    expect(listed.code).toBe(0);
    const body = JSON.parse(listed.stdout);
    expect(body).toMatchObject({ stream: names.deadLetterStream, total: 1 });
    expect(body.items[0]).toMatchObject({ payload: poison, original_subject: names.runRequested, reason: expect.stringMatching(/prompt|additional/i) });
  });
});
