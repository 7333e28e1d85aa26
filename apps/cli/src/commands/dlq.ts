import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { busNames } from "@steward/contract";
import type { Command } from "../args";
import { print, table, type Context } from "../context";
import { ApiError, UnreachableError } from "../errors";
import { ExitCode } from "../exit-codes";
import { clip } from "../render";

type DlqCommand = Extract<Command, { name: "dlq.ls" }>;

/** One dead letter: a command the runner terminated, with why. */
export interface DeadLetter {
  readonly seq: number;
  readonly time: string;
  readonly subject: string;
  readonly reason: string | null;
  readonly original_subject: string | null;
  readonly original_seq: number | null;
  readonly payload: unknown;
}

/** NATS_URL's server and the login: NATS_USER/NATS_PASSWORD, the URL's own, or `npm start`'s operator user. */
export function natsLogin(env: NodeJS.ProcessEnv, home: string): { server: string; shown: string; user?: string; pass?: string } {
  const url = new URL((env.NATS_URL || "nats://127.0.0.1:4222").split(",")[0].trim());
  const server = `${url.hostname}:${url.port || "4222"}`;
  const shown = `nats://${server}`;
  if (env.NATS_USER) return { server, shown, user: env.NATS_USER, pass: env.NATS_PASSWORD ?? "" };
  if (url.username) return { server, shown, user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
  try {
    const creds = JSON.parse(readFileSync(join(home, "credentials.json"), "utf8")) as { nats?: { operator?: string } };
    if (creds.nats?.operator) return { server, shown, user: "operator", pass: creds.nats.operator };
  } catch {
    // no local credentials: connect without a login
  }
  return { server, shown };
}

async function connectOnce(env: NodeJS.ProcessEnv, home: string): Promise<NatsConnection> {
  const login = natsLogin(env, home);
  try {
    return await connect({ servers: login.server, user: login.user, pass: login.pass, name: "steward-cli", timeout: 5000, maxReconnectAttempts: 0 });
  } catch (err) {
    const text = String((err as Error).message ?? err);
    if (/authori[sz]ation|permissions/i.test(text))
      throw new ApiError({ status: 403, title: `NATS at ${login.shown} refused the login`, detail: "set NATS_USER and NATS_PASSWORD" });
    throw new UnreachableError(`cannot reach NATS at ${login.shown}: ${text}`);
  }
}

/**
 * `steward dlq ls [--limit N]`: the newest dead letters, read from the dead-letter stream on NATS directly
 * (no REST route lists them; GET /v1/admin/status only counts them), as an operator's NATS CLI would.
 */
export async function dlqCommand(ctx: Context, cmd: DlqCommand): Promise<number> {
  const names = busNames(ctx.env.STEWARD_NATS_NAMESPACE || "");
  const nc = await connectOnce(ctx.env, ctx.home);
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(names.deadLetterStream).catch((err: unknown) => {
      if (/stream not found/i.test(String((err as Error).message))) return null;
      throw err;
    });
    const letters: DeadLetter[] = [];
    if (info) {
      for (let seq = info.state.last_seq; seq >= info.state.first_seq && seq > 0 && letters.length < cmd.limit; seq--) {
        const m = await jsm.streams.getMessage(names.deadLetterStream, { seq }).catch(() => null);
        if (!m) continue; // deleted
        let payload: unknown = m.string();
        try {
          payload = JSON.parse(m.string());
        } catch {
          // not JSON: shown as text
        }
        const seqHeader = m.header?.get("Steward-Original-Stream-Seq");
        letters.push({
          seq: m.seq,
          time: m.time.toISOString(),
          subject: m.subject,
          reason: m.header?.get("Steward-Dead-Letter-Reason") || null,
          original_subject: m.header?.get("Steward-Original-Subject") || null,
          original_seq: seqHeader ? Number(seqHeader) : null,
          payload,
        });
      }
    }
    const result = { stream: names.deadLetterStream, total: info?.state.messages ?? 0, items: letters };
    print(ctx, result, (r) => {
      if (r.items.length === 0) return `no dead letters in ${r.stream}`;
      const rows = r.items.map((l) => [
        String(l.seq),
        l.time,
        clip(l.reason ?? "", 60),
        clip(typeof l.payload === "string" ? l.payload : JSON.stringify(l.payload), 80),
      ]);
      return table([["SEQ", "TIME", "REASON", "PAYLOAD"], ...rows]) + ctx.style.dim(`${r.items.length} newest of ${r.total} in ${r.stream}`);
    });
    return ExitCode.ok;
  } finally {
    await nc.close().catch(() => undefined);
  }
}
