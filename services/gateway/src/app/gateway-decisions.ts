import { ForbiddenError } from "@steward/platform";
import { NoActiveSetError, StaleRolesError, decisionRow, type DecisionEntry, type DecisionQuery, type Pdp } from "@steward/pdp";
import type { PolicyDecisionApi } from "@steward/proto";

/**
 * A permit whose record is not written yet: the work it permits commits `row` in its own statement, or `write`
 * puts it in the log alone; either before anything acts on the permit or answers.
 */
export interface PendingPermit {
  /** The record as a `policy_decisions` row. */
  readonly row: Readonly<Record<string, unknown>>;
  /**
   * The member's roles the permit was decided on from memory, or null (read for it): the statement that commits
   * `row` must find the member holding exactly these, or write nothing (then `renew`).
   */
  readonly rememberedRoles: readonly string[] | null;
  /**
   * Writes the record alone (group-committed with the gateway's other decisions); resolves once committed. When
   * the remembered roles are no longer the member's, decides again first: a deny is recorded and thrown
   * (ForbiddenError), a permit recorded.
   */
  write(): Promise<void>;
  /**
   * The member's roles changed since the decision (the work's statement wrote nothing): decides again on the
   * roles read now. A permit comes back, its record still to write; a deny is recorded and thrown (ForbiddenError).
   */
  renew(): Promise<PendingPermit>;
}

/** A decision as the gateway acts on it: permit, or the deny's code. */
export interface GatewayDecision {
  readonly permit: boolean;
  readonly code: string;
  /** Only for a permit asked with `deferRecord` and decided in process: its record, still to be written. */
  readonly pending?: PendingPermit;
}

/** Decides one of the gateway's own policy points (a route, an MCP call); rejects when it cannot be decided. */
export type GatewayDecide = (query: DecisionQuery, options?: { traceparent?: string; deferRecord?: boolean }) => Promise<GatewayDecision>;

/** How long the policy service is waited for when it must be asked (its channel included). */
const REMOTE_DEADLINE_MS = 2000;

/**
 * The gateway's decisions, made in process by the same PDP as the policy service's (`@steward/pdp`): the
 * tenant's active set (activations heard on NATS), the membership of this moment, and the record written to the
 * decision log, group-committed, before the answer. A route guards the gateway's own work, not a tool's side
 * effect, so it needs no hop to another process. A tenant that has no policy set yet is asked of the policy
 * service, which installs the default set (the gateway may not write policy sets) and records that decision.
 *
 * With `deferRecord`, a permit decided in process comes back with its record unwritten (`pending`), for the work
 * it permits to commit in the same statement: one commit for the decision and the run it lets be created.
 */
export function createGatewayDecisions(deps: { pdp: Pick<Pdp, "decide" | "log">; policyService: PolicyDecisionApi }): GatewayDecide {
  const { pdp } = deps;

  async function renewed(query: DecisionQuery): Promise<PendingPermit> {
    const again = await pdp.decide.evaluate(query, { fresh: true });
    if (!again.decision.permit) {
      await pdp.log.record(again.entry);
      throw new ForbiddenError();
    }
    return pendingOf(query, again.entry);
  }

  function pendingOf(query: DecisionQuery, entry: DecisionEntry): PendingPermit {
    return {
      row: decisionRow(entry),
      rememberedRoles: entry.rememberedRoles ?? null,
      async write() {
        try {
          await pdp.log.record(entry);
        } catch (err) {
          if (!(err instanceof StaleRolesError)) throw err;
          await (await renewed(query)).write();
        }
      },
      renew: () => renewed(query),
    };
  }

  return async (query, options = {}) => {
    try {
      if (!options.deferRecord) {
        const d = await pdp.decide(query);
        return { permit: d.permit, code: d.code };
      }
      let evaluated = await pdp.decide.evaluate(query);
      // A deny rests on the roles the member holds now: one made on remembered roles is made again on a read.
      if (!evaluated.decision.permit && evaluated.entry.rememberedRoles) evaluated = await pdp.decide.evaluate(query, { fresh: true });
      const { decision, entry } = evaluated;
      // A deny permits nothing to carry its record: it is written now, before the refusal.
      if (!decision.permit) await pdp.log.record(entry);
      return { permit: decision.permit, code: decision.code, pending: decision.permit ? pendingOf(query, entry) : undefined };
    } catch (err) {
      if (!(err instanceof NoActiveSetError)) throw err;
    }
    const d = await deps.policyService.decide(
      {
        principal: { tenantId: query.tenantId, userId: query.userId, roles: [...(query.tokenRoles ?? [])], rolesFromToken: query.tokenRoles !== null },
        action: query.action,
        resource: query.resource,
        context: { ...query.context },
      },
      { deadlineMs: REMOTE_DEADLINE_MS, traceparent: options.traceparent, waitForReady: true },
    );
    return { permit: d.permit, code: d.code };
  };
}
