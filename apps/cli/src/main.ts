import { createApi } from "./api";
import { parseCommandLine, type Command } from "./args";
import { configPath, readStoredConfig, recordedGatewayUrl, resolveSettings, stewardHome } from "./config";
import type { Context } from "./context";
import { developmentSecretAvailable, mintDevelopmentToken } from "./dev-token";
import { ApiError, UsageError, exitCodeOf } from "./errors";
import { ExitCode } from "./exit-codes";
import { usage } from "./help";
import { createLineReader } from "./prompt";
import { colourWanted, createSpinner, createStyle } from "./style";
import { adminRunsCommand } from "./commands/admin-runs";
import { auditCommand } from "./commands/audit";
import { dlqCommand } from "./commands/dlq";
import { kbCommand } from "./commands/kb";
import { mcpCommand } from "./commands/mcp";
import { loginCommand, tokenCommand } from "./commands/login";
import { policiesCommand } from "./commands/policies";
import { proposalsCommand } from "./commands/proposals";
import { replayCommand } from "./commands/replay";
import { runCommand } from "./commands/run";
import { runsCommand } from "./commands/runs";
import { statusCommand } from "./commands/status";
import { threadsCommand } from "./commands/threads";

export interface Io {
  readonly stdin: NodeJS.ReadStream;
  readonly stdout: NodeJS.WriteStream;
  readonly stderr: NodeJS.WriteStream;
  readonly env: NodeJS.ProcessEnv;
}

async function dispatch(ctx: Context, command: Command, io: Io): Promise<number> {
  switch (command.name) {
    case "help":
      io.stdout.write(usage(command.topic));
      return ExitCode.ok;
    case "login":
      return loginCommand(ctx, command, io.stdin);
    case "token":
      return tokenCommand(ctx);
    case "run":
      return runCommand(ctx, command);
    case "replay":
      return replayCommand(ctx, command);
    case "status":
      return statusCommand(ctx);
    case "dlq.ls":
      return dlqCommand(ctx, command);
    case "kb.add":
    case "kb.ls":
    case "kb.rm":
      return kbCommand(ctx, command);
    case "policies.ls":
    case "policies.validate":
    case "policies.dry-run":
    case "policies.activate":
      return policiesCommand(ctx, command);
    case "threads.new":
    case "threads.ls":
    case "threads.show":
    case "threads.fork":
    case "threads.archive":
      return threadsCommand(ctx, command);
    case "proposals.ls":
    case "proposals.apply":
    case "proposals.dismiss":
      return proposalsCommand(ctx, command);
    case "admin.runs":
    case "admin.show":
    case "admin.events":
      return adminRunsCommand(ctx, command);
    case "audit.decisions":
    case "audit.mcp-sessions":
      return auditCommand(ctx, command);
    case "mcp":
      return mcpCommand(ctx, command, io.stdin, io.stdout);
    default:
      return runsCommand(ctx, command);
  }
}

/** Hints for the refusals a person can act on; never echoing the token. */
function hintFor(err: ApiError): string {
  if (err.problem.status === 401) return "the token was refused: set STEWARD_TOKEN or run `steward login`";
  if (err.problem.status === 403) return "your token's roles do not allow this";
  return "";
}

/** Runs the CLI; resolves with the exit code. Errors are printed to stderr, without the token. */
export async function main(
  argv: readonly string[],
  io: Io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  const errStyle = createStyle(colourWanted(io.stderr, io.env));
  const reader = createLineReader(io.stdin, io.stderr);
  try {
    const { globals, command } = parseCommandLine(argv);
    const home = stewardHome(io.env);
    const configFile = configPath(io.env);
    const settings = resolveSettings({
      ...(globals.url ? { flagUrl: globals.url } : {}),
      env: io.env,
      stored: command.name === "help" ? {} : readStoredConfig(configFile),
      recordedUrl: recordedGatewayUrl(home),
      developmentSecretAvailable: developmentSecretAvailable(io.env, home),
    });
    let minted: Promise<string> | null = null;
    const token = (): Promise<string> => {
      if (settings.token) return Promise.resolve(settings.token);
      if (settings.tokenSource === "development") {
        minted ??= mintDevelopmentToken(io.env, home, { tenant: "demo", user: "demo-user", roles: ["member"], ttl: "1h" });
        return minted;
      }
      return Promise.reject(new UsageError("no token: set STEWARD_TOKEN, or run `steward login`"));
    };
    const style = createStyle(!globals.json && colourWanted(io.stdout, io.env));
    const ctx: Context = {
      globals,
      env: io.env,
      settings,
      home,
      configFile,
      api: createApi(settings.url, token),
      style,
      spinner: createSpinner(io.stderr, !globals.json && io.stderr.isTTY === true),
      reader,
      stdout: io.stdout,
      stderr: io.stderr,
      token,
    };
    return await dispatch(ctx, command, io);
  } catch (err) {
    const code = exitCodeOf(err);
    const message = err instanceof Error ? err.message : String(err);
    io.stderr.write(`${errStyle.red("steward:")} ${message}\n`);
    if (err instanceof ApiError && hintFor(err)) io.stderr.write(`${hintFor(err)}\n`);
    if (code === ExitCode.usage && !(err instanceof UsageError && message.startsWith("no token"))) io.stderr.write("see `steward help`\n");
    if (code === ExitCode.internal && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
    return code;
  } finally {
    reader.close();
  }
}
