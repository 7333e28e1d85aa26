import type { DecisionRecord, McpSessionRecord, Page } from "@steward/contract";
import type { Command } from "../args";
import { print, table, type Context } from "../context";
import { ExitCode } from "../exit-codes";
import { shortId } from "../render";

type AuditCommand = Extract<Command, { name: `audit.${string}` }>;

type Decision = DecisionRecord;
type McpSessionPage = Page<McpSessionRecord>;

/** `steward audit decisions | mcp-sessions`: the tenant's decision log and its MCP sessions (auditors). */
export async function auditCommand(ctx: Context, cmd: AuditCommand): Promise<number> {
  switch (cmd.name) {
    case "audit.decisions": {
      const query = { after: cmd.after, limit: cmd.limit, run_id: cmd.runId, mcp_session_id: cmd.mcpSessionId };
      const log = await ctx.api.request<{ items: Decision[]; next_after: number }>("GET", "/v1/audit/decisions", { query });
      print(ctx, log, (l) => {
        if (l.items.length === 0) return cmd.after ? `no decisions after ${cmd.after}` : "no decisions match";
        const rows = l.items.map((d) => [
          String(d.id),
          d.decided_at,
          d.user_id,
          d.action,
          `${d.resource.type}/${d.resource.id}`,
          d.permit ? "permit" : ctx.style.red(`deny ${d.code ?? ""}`.trim()),
          d.mcp_session_id ? `${shortId(d.mcp_session_id)} ${d.mcp_mode ?? ""}`.trim() : d.run_id ? `run ${shortId(d.run_id)}` : "",
        ]);
        const more = l.items.length === cmd.limit ? `; more: --after ${l.next_after}` : "";
        return (
          table([["ID", "DECIDED", "USER", "ACTION", "RESOURCE", "EFFECT", "SESSION/RUN"], ...rows]) +
          ctx.style.dim(`${l.items.length} decisions, oldest first${more}`)
        );
      });
      return ExitCode.ok;
    }
    case "audit.mcp-sessions": {
      const query = { page: cmd.page, page_size: cmd.pageSize, user_id: cmd.user, open: cmd.open ? "true" : undefined };
      const page = await ctx.api.request<McpSessionPage>("GET", "/v1/audit/mcp-sessions", { query });
      print(ctx, page, (p) => {
        if (p.items.length === 0) return p.page === 1 ? "no MCP sessions match" : `no MCP sessions on page ${p.page} (${p.total} in all)`;
        const rows = p.items.map((s) => [
          s.id,
          s.user_id,
          s.mode,
          s.opened_at,
          s.closed_at ? `${s.closed_at} (${s.close_reason ?? ""})` : ctx.style.bold("open"),
        ]);
        return (
          table([["ID", "USER", "MODE", "OPENED", "CLOSED"], ...rows]) +
          ctx.style.dim(`page ${p.page}, ${p.items.length} of ${p.total}; what one did: steward audit decisions --mcp-session ID`)
        );
      });
      return ExitCode.ok;
    }
  }
}
