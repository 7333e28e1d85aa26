import { printableUrl } from "../config";
import { print, type Context } from "../context";
import { ExitCode } from "../exit-codes";

interface Check {
  ok: boolean;
  reason?: string;
}
export interface PlatformStatus {
  scope: "platform";
  status: string;
  checked_at: string;
  problems: string[];
  dependencies: Record<string, Check | null>;
  services: Array<{ service: string; instance: string; ready: boolean; started_at: string; reasons: string[]; in_flight?: number; concurrency?: number }>;
  runners: { attached: number; in_flight: number; consumer: { pending: number; ack_pending: number; redelivered: number } | null };
  queue: { queued: number; running: number; awaiting: number } | null;
  outbox: { backlog: number } | null;
  dead_letters: { count: number; last_at: string | null } | null;
}
/** What a tenant's administrator sees (the platform-wide document is the operators' tenant's). */
export interface TenantStatus {
  scope: "tenant";
  tenant_id: string;
  status: string;
  checked_at: string;
  problems: string[];
  queue: { queued: number; running: number; awaiting: number } | null;
}

const runsLine = (q: { queued: number; running: number; awaiting: number }) =>
  `runs      ${q.queued} queued, ${q.running} running, ${q.awaiting} waiting for a person`;

/** The status document as a person reads it. */
export function renderStatus(ctx: Context, s: PlatformStatus | TenantStatus): string {
  const st = ctx.style;
  const ok = s.status === "ok";
  const what = s.scope === "tenant" ? `tenant ${s.tenant_id}` : "";
  const out = [
    `${st.bold("Steward")} at ${printableUrl(ctx.settings.url)}${what ? `, ${what}` : ""}: ${ok ? st.green("ok") : st.red("degraded")}  ${st.dim(s.checked_at)}`,
  ];
  for (const p of s.problems) out.push(st.yellow(`  ! ${p}`));
  if (s.scope === "tenant") {
    if (s.queue) out.push(runsLine(s.queue));
    out.push(st.dim("instances, runners, the outbox and dead letters are shown to the operators' tenant"));
    return out.join("\n");
  }
  out.push("dependencies");
  for (const [name, c] of Object.entries(s.dependencies))
    out.push(`  ${c?.ok ? st.green("up  ") : st.red("down")}  ${name}${c && !c.ok && c.reason ? `  ${c.reason}` : ""}`);
  out.push("services");
  if (s.services.length === 0) out.push("  none answered");
  for (const i of s.services) {
    const load = typeof i.in_flight === "number" ? `  ${i.in_flight}/${i.concurrency} runs in hand` : "";
    out.push(`  ${i.ready ? st.green("ready    ") : st.red("not ready")}  ${i.service.padEnd(12)} ${i.instance}${load}`);
    for (const r of i.reasons) out.push(st.dim(`      ${r}`));
  }
  const c = s.runners.consumer;
  out.push(
    `runners   ${s.runners.attached} attached, ${s.runners.in_flight} runs in hand${c ? `; ${c.pending} pending on the bus, ${c.redelivered} redelivered` : ""}`,
  );
  if (s.queue) out.push(runsLine(s.queue));
  if (s.outbox) out.push(`outbox    ${s.outbox.backlog} not yet on the bus`);
  out.push(`dead letters ${s.dead_letters ? `${s.dead_letters.count}${s.dead_letters.last_at ? ` (last ${s.dead_letters.last_at})` : ""}` : "unknown"}`);
  return out.join("\n");
}

/** `steward status` (an administrator's token): exit 0 when whole, 1 when degraded. */
export async function statusCommand(ctx: Context): Promise<number> {
  const status = await ctx.api.request<PlatformStatus | TenantStatus>("GET", "/v1/admin/status");
  print(ctx, status, (s) => renderStatus(ctx, s));
  return status.status === "ok" ? ExitCode.ok : ExitCode.negative;
}
