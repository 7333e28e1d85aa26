import type { Command } from "../args";
import { printableUrl, readStoredConfig, writeStoredConfig } from "../config";
import { print, type Context } from "../context";
import { mintDevelopmentToken } from "../dev-token";
import { UsageError } from "../errors";
import { ExitCode } from "../exit-codes";
import { claimsOf, looksLikeJwt } from "../jwt-claims";

type LoginCommand = Extract<Command, { name: "login" }>;

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of stream) text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
  return text;
}

/**
 * `steward login`: stores a token (and --url, when given) in the config file. With --token-stdin the token is
 * read from stdin (never from the command line, where other users could see it); otherwise a development
 * token is minted as `npm run token` does (default tenant demo, user demo-user, role member, 12 h).
 */
export async function loginCommand(ctx: Context, cmd: LoginCommand, stdin: NodeJS.ReadableStream): Promise<number> {
  let token: string;
  if (cmd.tokenStdin) {
    token = (await readAll(stdin)).trim();
    if (!looksLikeJwt(token)) throw new UsageError("stdin did not hold a token (a JWT: three base64url parts joined by dots)");
  } else {
    token = await mintDevelopmentToken(ctx.env, ctx.home, { tenant: cmd.tenant, user: cmd.user, roles: cmd.roles, ttl: cmd.ttl });
  }
  const stored = readStoredConfig(ctx.configFile);
  const url = ctx.globals.url ?? stored.url;
  writeStoredConfig(ctx.configFile, { ...(url ? { url } : {}), token });
  const claims = claimsOf(token);
  print(ctx, { config: ctx.configFile, ...(url ? { url: printableUrl(url) } : {}), ...claims }, (r) =>
    [
      `logged in as ${r.user ?? "?"} in tenant ${r.tenant ?? "?"}${r.roles ? ` (${r.roles.join(", ")})` : ""}${r.expires_at ? `, until ${r.expires_at}` : ""}`,
      ctx.style.dim(`saved in ${r.config}`),
    ].join("\n"),
  );
  return ExitCode.ok;
}

/** `steward token`: prints the token in use (for `curl -H "Authorization: Bearer $(steward token)"`). */
export async function tokenCommand(ctx: Context): Promise<number> {
  const token = await ctx.token();
  print(ctx, { token, source: ctx.settings.tokenSource, url: printableUrl(ctx.settings.url), ...claimsOf(token) }, (r) => r.token);
  return ExitCode.ok;
}
