import type { KnowledgeProposal, Page } from "@steward/contract";
import type { Command } from "../args";
import { print, table, type Context } from "../context";
import { ExitCode } from "../exit-codes";
import { clip } from "../render";

type ProposalsCommand = Extract<Command, { name: `proposals.${string}` }>;

type Proposal = KnowledgeProposal;
type ProposalPage = Page<Proposal>;

/** `steward proposals ls|apply|dismiss`: knowledge the agent proposed, waiting for a person. */
export async function proposalsCommand(ctx: Context, cmd: ProposalsCommand): Promise<number> {
  switch (cmd.name) {
    case "proposals.ls": {
      const query = { page: cmd.page, page_size: cmd.pageSize, status: cmd.status, scope: cmd.all ? "tenant" : undefined };
      const page = await ctx.api.request<ProposalPage>("GET", "/v1/knowledge/proposals", { query });
      print(ctx, page, (p) => {
        if (p.items.length === 0) return p.page === 1 ? "no proposals" : `no proposals on page ${p.page} (${p.total} in all)`;
        const rows = p.items.map((x) => [x.id, x.status, x.proposed_by, clip(x.title, 40), clip(x.content, 60)]);
        return table([["ID", "STATUS", "BY", "TITLE", "CONTENT"], ...rows]) + ctx.style.dim(`page ${p.page}, ${p.items.length} of ${p.total}`);
      });
      return ExitCode.ok;
    }
    case "proposals.apply": {
      const proposal = await ctx.api.request<Proposal>("POST", `/v1/knowledge/proposals/${cmd.id}/apply`);
      print(ctx, proposal, (p) => `applied ${p.id}: knowledge document ${ctx.style.bold(p.document_id ?? "")}`);
      return ExitCode.ok;
    }
    case "proposals.dismiss": {
      const proposal = await ctx.api.request<Proposal>("POST", `/v1/knowledge/proposals/${cmd.id}/dismiss`);
      print(ctx, proposal, (p) => `dismissed ${p.id}`);
      return ExitCode.ok;
    }
  }
}
