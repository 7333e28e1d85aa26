import { Type, type Static } from "@sinclair/typebox";
import { PROPOSE_KNOWLEDGE_TOOL, toolFingerprint } from "@steward/contract";
import { inTransaction, type Pool } from "@steward/platform";
import { queueProposal, type QueueProposalOutcome } from "@steward/store";
import type { ToolDefinition, ToolOutcome } from "../../domain/tool";
import { checkProposalContent } from "../../domain/proposal-content";
import { ProposalLimits, ProposalResultCode } from "../../domain/proposal-limits";

const NOT_BLANK = "\\S";

const Input = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200, pattern: NOT_BLANK, description: "A short title for the entry, 1-200 characters" }),
    content: Type.String({ minLength: 1, maxLength: 4000, pattern: NOT_BLANK, description: "The fact or rule to remember, 1-4000 characters" }),
    evidence_quote: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        pattern: NOT_BLANK,
        description: "A short quote from this run's evidence that supports it, up to 1000 characters",
      }),
    ),
  },
  { additionalProperties: false },
);
type Input = Static<typeof Input>;

const normalise = (i: Input): Input => ({
  title: i.title.trim(),
  content: i.content.trim(),
  ...(i.evidence_quote === undefined ? {} : { evidence_quote: i.evidence_quote.trim() }),
});

/** What the model reads back: the proposal queued, or why nothing was (never the text a check matched). */
function outcomeOf(queued: QueueProposalOutcome): ToolOutcome {
  switch (queued.kind) {
    case "queued":
      return {
        result: {
          proposal_id: queued.proposal.id,
          status: "pending",
          title: queued.proposal.title,
          note: "queued for review: it is used only after a person applies it, and knowledge_search does not find it before",
        },
      };
    case "limit": {
      const code = ProposalResultCode.limitReached;
      const what =
        queued.limit === "run"
          ? `this run has made its ${queued.max} proposals`
          : queued.limit === "thread"
            ? `this thread already has ${queued.max} proposals waiting for review`
            : `you already have ${queued.max} proposals outside threads waiting for review`;
      return {
        resultCode: code,
        result: { error_code: code, limit: queued.limit, max: queued.max, note: `${what}; nothing was queued, do not propose again` },
      };
    }
    case "no_run":
      throw new Error("the call's run is not in the runs projection");
    default: {
      const unreachable: never = queued;
      throw new TypeError(`unknown outcome ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * Proposes a knowledge entry for a person to review (SPEC §9, docs/memory.md). A side effect, so idempotent
 * by fingerprint: the proposal is queued in the transaction of the call's record, and a retried call is
 * answered from it without queuing twice. No confirmation: the person's review is the governance. Content
 * carrying SQL, internal names or secrets is refused with nothing stored; limits answer a code, not an error.
 */
export function proposeKnowledgeTool(pool: Pool): ToolDefinition<typeof Input> {
  return {
    name: PROPOSE_KNOWLEDGE_TOOL,
    description:
      "Propose a fact worth remembering for later runs (title, content, optional evidence quote). A person reviews it; it is " +
      "used only once applied. At most 2 proposals per run. Never include SQL, table or cache names, credentials or tokens.",
    input: Input,
    normalise,
    safety: "write",
    policyPoint: "knowledge.proposal.create",
    idempotent: true,
    abortOnDeny: false,
    requireConfirmation: false,
    exploration: false,
    async run(ctx, raw) {
      const input = normalise(raw);
      const finding = checkProposalContent({ title: input.title, content: input.content, evidence_quote: input.evidence_quote });
      if (finding) {
        const code = ProposalResultCode.rejected;
        return {
          resultCode: code,
          result: {
            error_code: code,
            reason: finding.reason,
            field: finding.field,
            note: `the ${finding.field} carries ${finding.reason.replace("_", " ")}: nothing was stored`,
          },
        };
      }
      const proposal = {
        tenantId: ctx.tenantId,
        runId: ctx.runId,
        stepNo: ctx.stepNo,
        fingerprint: toolFingerprint(PROPOSE_KNOWLEDGE_TOOL, input),
        proposedBy: ctx.userId,
        title: input.title,
        content: input.content,
        evidenceQuote: input.evidence_quote ?? null,
      };
      // Queued with the call's record: exactly once, whatever fails between the two.
      const queued = ctx.transaction
        ? await queueProposal(ctx.transaction, proposal, ProposalLimits)
        : await inTransaction(pool, (client) => queueProposal(client, proposal, ProposalLimits));
      return outcomeOf(queued);
    },
  };
}
