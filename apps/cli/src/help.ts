/** The usage text; `steward help <command>` shows the lines of that command. */
const USAGE = `steward: Steward's command line

  steward login [--tenant T --user U --roles r1,r2 --ttl 12h] [--url URL]
                                       mint a development token and keep it in the config file
  steward login --token-stdin [--url URL]
                                       keep a token read from stdin
  steward token                        print the token in use
  steward run "question" [--mode ask] [--language L] [--idempotency-key K] [--thread ID] [--follow|-f]
                                       start a run (--thread: as the next turn of a conversation);
                                       --follow renders it live and asks you in place
  steward runs ls [--page N] [--page-size N]
  steward runs show <id>
  steward runs events <id> [--after N] [--follow]
  steward runs cancel <id>
  steward runs answer <id> <answer>
  steward runs approve <id>
  steward runs reject <id>
  steward replay <id>... | --all-finished [--limit N]
                                       re-drive finished runs from their events (needs DATABASE_URL)
  steward threads new [--title T]
  steward threads ls [--page N] [--page-size N]
  steward threads show <id>
  steward threads fork <id> --at <run id> [--title T]
                                       a new thread with the history up to and including that run
  steward threads archive <id>
  steward proposals ls [--status pending|applied|dismissed] [--all] [--page N] [--page-size N]
                                       knowledge the agent proposed (--all: the tenant's, for admins)
  steward proposals apply <id>         make it a knowledge document
  steward proposals dismiss <id>
  steward admin runs [--user U] [--state S] [--code C] [--thread ID] [--since T] [--until T] [--page N] [--page-size N]
                                       every user's runs of the tenant (an administrator; each read audited)
  steward admin show <id>
  steward admin events <id>
  steward audit decisions [--run ID] [--mcp-session ID] [--after N] [--limit N]
                                       the tenant's policy decisions, oldest first (an administrator)
  steward audit mcp-sessions [--user U] [--open] [--page N] [--page-size N]
                                       the tenant's MCP sessions, newest first: who, mode, opened, closed and why
  steward kb add <file> [--title T]
  steward kb ls [--page N] [--page-size N]
  steward kb rm <id>
  steward policies ls
  steward policies validate <file.cedar>
  steward policies dry-run --action A --user U [--roles r1,r2] [--resource type:id] [--version N] [--elevated]
  steward policies activate <version | file.cedar>
  steward mcp [--mode observe|execute|admin]
                                       Steward's MCP endpoint for a local client over stdio (docs/mcp.md)
  steward status                       the platform's health (an administrator's token)
  steward dlq ls [--limit N]           dead letters, read from NATS (NATS_URL)

Every command takes --json (machine output) and --url URL.
Settings: STEWARD_URL, STEWARD_TOKEN, or the config file ($STEWARD_CONFIG, default ~/.config/steward/config.json).
Exit codes: 0 ok, 1 negative outcome (run failed or cancelled, ...), 2 usage, 3 refused by the API (4xx),
4 platform unreachable or 5xx. Details: docs/cli.md
`;

export function usage(topic?: string): string {
  if (!topic) return USAGE;
  const lines = USAGE.split("\n");
  const isTopic = (l: string | undefined) => l !== undefined && new RegExp(`^  steward ${topic.replace(/[^a-z-]/g, "")}( |$)`).test(l);
  const picked = lines.filter((l, i) => isTopic(l) || (l.startsWith("       ") && isTopic(lines[i - 1])));
  return picked.length ? `${picked.join("\n")}\n` : USAGE;
}
