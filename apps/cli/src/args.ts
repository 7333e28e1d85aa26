import { parseArgs } from "node:util";
import { UsageError } from "./errors";

/** Options every command takes. */
export interface Globals {
  /** Machine-readable output: one JSON document (or one per line for streams) on stdout. */
  readonly json: boolean;
  /** The gateway's base URL, over STEWARD_URL and the config file. */
  readonly url?: string;
}

export type Command =
  | { readonly name: "help"; readonly topic?: string }
  | { readonly name: "login"; readonly tokenStdin: boolean; readonly tenant: string; readonly user: string; readonly roles: string[]; readonly ttl: string }
  | { readonly name: "token" }
  | {
      readonly name: "run";
      readonly input: string;
      readonly mode: "agent" | "ask";
      readonly language?: string;
      readonly follow: boolean;
      readonly idempotencyKey?: string;
      readonly threadId?: string;
    }
  | { readonly name: "runs.ls"; readonly page: number; readonly pageSize: number }
  | { readonly name: "runs.show" | "runs.cancel" | "runs.approve" | "runs.reject"; readonly id: string }
  | { readonly name: "runs.events"; readonly id: string; readonly follow: boolean; readonly after: number }
  | { readonly name: "runs.answer"; readonly id: string; readonly answer: string }
  | { readonly name: "replay"; readonly ids: string[]; readonly allFinished: boolean; readonly limit?: number }
  | { readonly name: "kb.add"; readonly file: string; readonly title?: string }
  | { readonly name: "kb.ls"; readonly page: number; readonly pageSize: number }
  | { readonly name: "kb.rm"; readonly id: string }
  | { readonly name: "policies.ls" }
  | { readonly name: "policies.validate"; readonly file: string }
  | { readonly name: "policies.activate"; readonly target: { readonly version: number } | { readonly file: string } }
  | {
      readonly name: "policies.dry-run";
      readonly action: string;
      readonly user: string;
      readonly roles: string[];
      readonly resource: { readonly type: string; readonly id: string };
      readonly version?: number;
      readonly elevated: boolean;
    }
  | { readonly name: "status" }
  | { readonly name: "dlq.ls"; readonly limit: number }
  | { readonly name: "threads.new"; readonly title?: string }
  | { readonly name: "threads.ls"; readonly page: number; readonly pageSize: number }
  | { readonly name: "threads.show" | "threads.archive"; readonly id: string }
  | { readonly name: "threads.fork"; readonly id: string; readonly atRunId: string; readonly title?: string }
  | { readonly name: "proposals.ls"; readonly page: number; readonly pageSize: number; readonly status?: string; readonly all: boolean }
  | { readonly name: "proposals.apply" | "proposals.dismiss"; readonly id: string }
  | { readonly name: "admin.runs"; readonly page: number; readonly pageSize: number; readonly filters: AdminRunFilters }
  | { readonly name: "admin.show" | "admin.events"; readonly id: string }
  | { readonly name: "audit.decisions"; readonly after: number; readonly limit: number; readonly runId?: string; readonly mcpSessionId?: string }
  | { readonly name: "audit.mcp-sessions"; readonly page: number; readonly pageSize: number; readonly user?: string; readonly open: boolean }
  | { readonly name: "mcp"; readonly mode: "observe" | "execute" | "admin" };

/** The admins' run list filters, as the query keys of GET /v1/admin/runs. */
export interface AdminRunFilters {
  readonly user?: string;
  readonly state?: string;
  readonly code?: string;
  readonly thread_id?: string;
  readonly created_after?: string;
  readonly created_before?: string;
}

export interface CommandLine {
  readonly globals: Globals;
  readonly command: Command;
}

const OPTIONS = {
  json: { type: "boolean" },
  url: { type: "string" },
  help: { type: "boolean", short: "h" },
  follow: { type: "boolean", short: "f" },
  mode: { type: "string" },
  language: { type: "string" },
  "idempotency-key": { type: "string" },
  page: { type: "string" },
  "page-size": { type: "string" },
  after: { type: "string" },
  "all-finished": { type: "boolean" },
  limit: { type: "string" },
  title: { type: "string" },
  "token-stdin": { type: "boolean" },
  tenant: { type: "string" },
  user: { type: "string" },
  roles: { type: "string" },
  ttl: { type: "string" },
  action: { type: "string" },
  resource: { type: "string" },
  version: { type: "string" },
  elevated: { type: "boolean" },
  thread: { type: "string" },
  at: { type: "string" },
  status: { type: "string" },
  all: { type: "boolean" },
  state: { type: "string" },
  code: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  run: { type: "string" },
  "mcp-session": { type: "string" },
  open: { type: "boolean" },
} as const;

type OptionName = keyof typeof OPTIONS;
type Values = { [K in OptionName]?: (typeof OPTIONS)[K]["type"] extends "boolean" ? boolean : string };

const GLOBAL: readonly OptionName[] = ["json", "url", "help"];

/** The options each command accepts beyond the global ones; a command not listed takes none. */
const ALLOWED: Record<string, readonly OptionName[]> = {
  login: ["token-stdin", "tenant", "user", "roles", "ttl"],
  run: ["follow", "mode", "language", "idempotency-key", "thread"],
  "runs.ls": ["page", "page-size"],
  "runs.events": ["follow", "after"],
  replay: ["all-finished", "limit"],
  "kb.add": ["title"],
  "kb.ls": ["page", "page-size"],
  "policies.dry-run": ["action", "user", "roles", "resource", "version", "elevated"],
  "dlq.ls": ["limit"],
  "threads.new": ["title"],
  "threads.ls": ["page", "page-size"],
  "threads.fork": ["at", "title"],
  "proposals.ls": ["page", "page-size", "status", "all"],
  "admin.runs": ["page", "page-size", "user", "state", "code", "thread", "since", "until"],
  "audit.decisions": ["run", "mcp-session", "after", "limit"],
  "audit.mcp-sessions": ["user", "open", "page", "page-size"],
  mcp: ["mode"],
};

const GROUPS: Record<string, readonly string[]> = {
  runs: ["ls", "show", "events", "cancel", "answer", "approve", "reject"],
  kb: ["add", "ls", "rm"],
  policies: ["ls", "validate", "dry-run", "activate"],
  dlq: ["ls"],
  threads: ["new", "ls", "show", "fork", "archive"],
  proposals: ["ls", "apply", "dismiss"],
  admin: ["runs", "show", "events"],
  audit: ["decisions", "mcp-sessions"],
};
const SINGLE = ["login", "token", "run", "replay", "status", "help", "mcp"];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function positiveInt(name: string, raw: string | undefined, fallback: number, max = 2_147_483_647): number {
  if (raw === undefined) return fallback;
  if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}`);
  return Number(raw);
}

function afterOf(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^(0|[1-9][0-9]{0,8})$/.test(raw)) throw new UsageError("--after must be an event sequence number (0 or more)");
  return Number(raw);
}

function runId(raw: string | undefined, what = "run id"): string {
  if (raw === undefined) throw new UsageError(`a ${what} is needed`);
  if (!UUID.test(raw)) throw new UsageError(`not a ${what}: ${raw}`);
  return raw.toLowerCase();
}

function exactly(args: string[], count: number, what: string): void {
  if (args.length > count) throw new UsageError(`unexpected argument: ${args[count]} (${what})`);
}

function roleList(raw: string | undefined, fallback: string[]): string[] {
  if (raw === undefined) return fallback;
  return raw
    .split(",")
    .map((r) => r.trim())
    .filter(Boolean);
}

/** Parses the command line (without `node` and the script): the command and its options, or a UsageError. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const { values, positionals } = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true }) as {
    values: Values;
    positionals: string[];
  };
  const globals: Globals = { json: values.json === true, ...(values.url !== undefined ? { url: values.url } : {}) };
  if (values.url !== undefined && !/^https?:\/\/[^/]/.test(values.url)) throw new UsageError("--url must be an http:// or https:// URL");
  const [first, ...rest] = positionals;
  if (first === undefined || first === "help") return { globals, command: { name: "help", ...(rest[0] ? { topic: rest[0] } : {}) } };
  let name: string;
  let args: string[];
  if (first in GROUPS) {
    const sub = rest[0];
    if (sub === undefined || !GROUPS[first].includes(sub)) {
      if (values.help) return { globals, command: { name: "help", topic: first } };
      throw new UsageError(`${first} takes one of: ${GROUPS[first].join(", ")}${sub ? ` (not ${sub})` : ""}`);
    }
    name = `${first}.${sub}`;
    args = rest.slice(1);
  } else if (SINGLE.includes(first)) {
    name = first;
    args = rest;
  } else {
    throw new UsageError(`unknown command: ${first}`);
  }
  if (values.help) return { globals, command: { name: "help", topic: first } };
  const allowed = new Set([...GLOBAL, ...(ALLOWED[name] ?? [])]);
  const stray = (Object.keys(values) as OptionName[]).find((k) => values[k] !== undefined && !allowed.has(k));
  if (stray) throw new UsageError(`--${stray} does not go with \`${name.replace(".", " ")}\``);
  return { globals, command: commandOf(name, args, values) };
}

function commandOf(name: string, args: string[], v: Values): Command {
  switch (name) {
    case "login": {
      exactly(args, 0, "login takes options only");
      if (v["token-stdin"] && (v.tenant || v.user || v.roles || v.ttl))
        throw new UsageError("--token-stdin stores a given token: --tenant, --user, --roles, --ttl mint one");
      return {
        name,
        tokenStdin: v["token-stdin"] === true,
        tenant: v.tenant ?? "demo",
        user: v.user ?? "demo-user",
        roles: roleList(v.roles, ["member"]),
        ttl: v.ttl ?? "12h",
      };
    }
    case "token":
    case "status":
    case "policies.ls":
      exactly(args, 0, `${name.replace(".", " ")} takes no argument`);
      return { name };
    case "run": {
      const input = args.join(" ");
      if (!input.trim()) throw new UsageError('run needs a question: steward run "How long do I have to ask for a refund?"');
      const mode = v.mode ?? "agent";
      if (mode !== "agent" && mode !== "ask") throw new UsageError("--mode is agent or ask");
      return {
        name,
        input,
        mode,
        follow: v.follow === true,
        ...(v.language ? { language: v.language } : {}),
        ...(v["idempotency-key"] ? { idempotencyKey: v["idempotency-key"] } : {}),
        ...(v.thread !== undefined ? { threadId: runId(v.thread, "thread id") } : {}),
      };
    }
    case "runs.ls":
    case "kb.ls":
      exactly(args, 0, "use --page and --page-size");
      return { name, page: positiveInt("page", v.page, 1), pageSize: positiveInt("page-size", v["page-size"], 20, 100) };
    case "runs.show":
    case "runs.cancel":
    case "runs.approve":
    case "runs.reject":
      exactly(args, 1, "one run id");
      return { name, id: runId(args[0]) };
    case "runs.events":
      exactly(args, 1, "one run id");
      return { name, id: runId(args[0]), follow: v.follow === true, after: afterOf(v.after) };
    case "runs.answer": {
      const answer = args.slice(1).join(" ");
      const id = runId(args[0]);
      if (!answer.trim()) throw new UsageError("runs answer needs the answer: steward runs answer <id> <answer>");
      return { name, id, answer };
    }
    case "replay": {
      const allFinished = v["all-finished"] === true;
      if (allFinished && args.length > 0) throw new UsageError("give run ids or --all-finished, not both");
      if (!allFinished && args.length === 0) throw new UsageError("replay needs run ids or --all-finished");
      if (!allFinished && v.limit !== undefined) throw new UsageError("--limit goes with --all-finished");
      return { name, ids: args.map((a) => runId(a)), allFinished, ...(v.limit !== undefined ? { limit: positiveInt("limit", v.limit, 1) } : {}) };
    }
    case "kb.add":
      if (args.length === 0) throw new UsageError("kb add needs a file");
      exactly(args, 1, "one file");
      return { name, file: args[0], ...(v.title !== undefined ? { title: v.title } : {}) };
    case "kb.rm":
      exactly(args, 1, "one document id");
      return { name, id: runId(args[0], "document id") };
    case "policies.validate":
      if (args.length === 0) throw new UsageError("policies validate needs a Cedar file");
      exactly(args, 1, "one file");
      return { name, file: args[0] };
    case "policies.activate": {
      if (args.length === 0) throw new UsageError("policies activate needs a version number or a Cedar file");
      exactly(args, 1, "one version or file");
      const target = /^[1-9][0-9]{0,8}$/.test(args[0]) ? { version: Number(args[0]) } : { file: args[0] };
      return { name, target };
    }
    case "policies.dry-run": {
      exactly(args, 0, "policies dry-run takes options only");
      if (!v.action || !v.user) throw new UsageError("policies dry-run needs --action and --user");
      const resource = v.resource ?? "resource:";
      const colon = resource.indexOf(":");
      if (colon < 1) throw new UsageError("--resource is type:id, e.g. tool:save_note");
      return {
        name,
        action: v.action,
        user: v.user,
        roles: roleList(v.roles, []),
        resource: { type: resource.slice(0, colon), id: resource.slice(colon + 1) },
        elevated: v.elevated === true,
        ...(v.version !== undefined ? { version: positiveInt("version", v.version, 1) } : {}),
      };
    }
    case "dlq.ls":
      exactly(args, 0, "dlq ls takes options only");
      return { name, limit: positiveInt("limit", v.limit, 20, 1000) };
    default:
      return conversationCommandOf(name, args, v);
  }
}

const PROPOSAL_STATES = ["pending", "applied", "dismissed"];
const RUN_STATES = ["queued", "running", "awaiting_input", "awaiting_confirmation", "succeeded", "failed", "cancelled"];

function oneOf(option: string, raw: string | undefined, allowed: readonly string[]): string | undefined {
  if (raw !== undefined && !allowed.includes(raw)) throw new UsageError(`--${option} is one of: ${allowed.join(", ")}`);
  return raw;
}

/** A day (UTC) or a date and time with its zone, as GET /v1/admin/runs takes them. */
const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2}))?$/;

function instant(option: string, raw: string | undefined): string | undefined {
  if (raw !== undefined && (!INSTANT.test(raw) || Number.isNaN(Date.parse(raw)))) {
    throw new UsageError(`--${option} must be a day or a date and time with its zone, e.g. 2026-12-01 or 2026-12-01T09:00:00Z`);
  }
  return raw;
}

/** The commands of threads, proposals, the admins' run view and the audit. */
function conversationCommandOf(name: string, args: string[], v: Values): Command {
  const paging = () => ({ page: positiveInt("page", v.page, 1), pageSize: positiveInt("page-size", v["page-size"], 20, 100) });
  switch (name) {
    case "threads.new":
      exactly(args, 0, "use --title");
      return { name, ...(v.title !== undefined ? { title: v.title } : {}) };
    case "threads.ls":
      exactly(args, 0, "use --page and --page-size");
      return { name, ...paging() };
    case "threads.show":
    case "threads.archive":
      exactly(args, 1, "one thread id");
      return { name, id: runId(args[0], "thread id") };
    case "threads.fork":
      exactly(args, 1, "one thread id");
      if (v.at === undefined) throw new UsageError("threads fork needs --at <run id>: the last run the new thread keeps");
      return { name, id: runId(args[0], "thread id"), atRunId: runId(v.at), ...(v.title !== undefined ? { title: v.title } : {}) };
    case "proposals.ls": {
      exactly(args, 0, "use --status, --all, --page and --page-size");
      const status = oneOf("status", v.status, PROPOSAL_STATES);
      return { name, ...paging(), ...(status ? { status } : {}), all: v.all === true };
    }
    case "proposals.apply":
    case "proposals.dismiss":
      exactly(args, 1, "one proposal id");
      return { name, id: runId(args[0], "proposal id") };
    case "admin.runs": {
      exactly(args, 0, "use --user, --state, --code, --thread, --since, --until");
      if (v.code !== undefined && !/^[1-9][0-9]{0,8}$/.test(v.code)) throw new UsageError("--code is a run's error code, e.g. 60405");
      const filters = {
        ...(v.user !== undefined ? { user: v.user } : {}),
        ...(v.state !== undefined ? { state: oneOf("state", v.state, RUN_STATES) } : {}),
        ...(v.code !== undefined ? { code: v.code } : {}),
        ...(v.thread !== undefined ? { thread_id: runId(v.thread, "thread id") } : {}),
        ...(v.since !== undefined ? { created_after: instant("since", v.since) } : {}),
        ...(v.until !== undefined ? { created_before: instant("until", v.until) } : {}),
      };
      return { name, ...paging(), filters };
    }
    case "admin.show":
    case "admin.events":
      exactly(args, 1, "one run id");
      return { name, id: runId(args[0]) };
    case "audit.decisions": {
      exactly(args, 0, "use --run, --mcp-session, --after and --limit");
      if (v.after !== undefined && !/^(0|[1-9][0-9]{0,17})$/.test(v.after)) throw new UsageError("--after must be a decision id (0 or more)");
      return {
        name,
        after: v.after === undefined ? 0 : Number(v.after),
        limit: positiveInt("limit", v.limit, 100, 1000),
        ...(v.run !== undefined ? { runId: runId(v.run) } : {}),
        ...(v["mcp-session"] !== undefined ? { mcpSessionId: runId(v["mcp-session"], "session id") } : {}),
      };
    }
    case "audit.mcp-sessions":
      exactly(args, 0, "use --user, --open, --page and --page-size");
      if (v.user !== undefined && !v.user.trim()) throw new UsageError("--user names a user");
      return { name, ...paging(), ...(v.user !== undefined ? { user: v.user } : {}), open: v.open === true };
    case "mcp": {
      exactly(args, 0, "mcp takes --mode only");
      const mode = oneOf("mode", v.mode, ["observe", "execute", "admin"]) ?? "observe";
      return { name, mode: mode as "observe" | "execute" | "admin" };
    }
    default:
      throw new UsageError(`unknown command: ${name}`);
  }
}
