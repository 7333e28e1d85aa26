/** The usage text; `steward help <command>` shows the lines of that command. */
const USAGE = `steward: Steward's command line

  steward login [--tenant T --user U --roles r1,r2 --ttl 12h] [--url URL]
                                       mint a development token and keep it in the config file
  steward login --token-stdin [--url URL]
                                       keep a token read from stdin
  steward token                        print the token in use
  steward run "question" [--mode ask] [--language L] [--idempotency-key K] [--follow|-f]
                                       start a run; --follow renders it live and asks you in place
  steward runs ls [--page N] [--page-size N]
  steward runs show <id>
  steward runs events <id> [--after N] [--follow]
  steward runs cancel <id>
  steward runs answer <id> <answer>
  steward runs approve <id>
  steward runs reject <id>
  steward replay <id>... | --all-finished [--limit N]
                                       re-drive finished runs from their events (needs DATABASE_URL)
  steward kb add <file> [--title T]
  steward kb ls [--page N] [--page-size N]
  steward kb rm <id>
  steward policies ls
  steward policies validate <file.cedar>
  steward policies dry-run --action A --user U [--roles r1,r2] [--resource type:id] [--version N] [--elevated]
  steward policies activate <version | file.cedar>
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
