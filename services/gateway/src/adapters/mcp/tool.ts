import { Type, type Static, type TObject } from "@sinclair/typebox";
import type { ApprovalChannel, PolicyPoint, StoredRunEvent } from "@steward/contract";
import { StewardError, isPostgresUnavailable, type Logger } from "@steward/platform";
import type { Principal } from "../../domain/principal";
import type { CreateRun } from "../../app/create-run";
import type { RunControls } from "../../app/control-run";
import type { FollowRun } from "../../app/run-outcome";
import type { Capabilities } from "../../app/capability-catalogue";
import type { DecideForSession, McpSessionRef } from "../../app/decide-for-session";
import type { AdminRunReads } from "../../app/read-admin-runs";
import type { RunCreationAllowance } from "../http/rate-limit/register";
import type { McpToolName } from "../../domain/mcp-mode";
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpSessionState } from "./session-state";
import { UUID_PATTERN } from "../http/schemas";

/** Asks the person at the client a question with a form (MCP elicitation). */
export type Elicit = (params: ElicitRequestFormParams) => Promise<ElicitResult>;

/** Longest a tool waits for a run to end or to need a person, in seconds: below a client's usual 60 s request timeout. */
export const MAX_WAIT_SECONDS = 50;

export const RunId = Type.String({ pattern: UUID_PATTERN.source, description: "The run's id (a UUID)" });
export const WaitSeconds = Type.Integer({
  minimum: 0,
  maximum: MAX_WAIT_SECONDS,
  description: `How long to wait for the run to end or to need a person, in seconds (0-${MAX_WAIT_SECONDS}, default ${MAX_WAIT_SECONDS}); get_run goes on waiting`,
});
/** Tool arguments are closed objects: an unknown field is malformed (10001). */
export const closed = { additionalProperties: false } as const;

/** Everything a tool call may use: the same app functions as the REST routes. */
export interface McpToolDeps {
  /** The PDP, asked for every call before anything runs (and for a capability's own point), naming the session. */
  readonly decide: DecideForSession;
  readonly createRun: CreateRun;
  readonly controls: RunControls;
  readonly follow: FollowRun;
  readonly capabilities: Capabilities;
  /** The datasets the tenant grants a user now (select_workspace chooses among them). */
  readonly grantedDatasets: (tenantId: string, userId: string) => Promise<readonly string[]>;
  /** The administrators' tenant-wide view of runs (Admin sessions' list_tenant_runs). */
  readonly adminRuns?: AdminRunReads;
  /** The run-creation rate limits (none in unit tests). */
  readonly runAllowance?: RunCreationAllowance;
  readonly logger: Logger;
}

/** One call as a tool sees it. */
export interface McpCall<A> {
  readonly args: A;
  readonly principal: Principal;
  readonly session: McpSessionRef;
  /** The session's workspace and the runs it started (select_workspace, invocations). */
  readonly state: McpSessionState;
  readonly signal: AbortSignal;
  /** Asks the person through the client (MCP elicitation), when the client can; absent otherwise. */
  readonly elicit?: Elicit;
  /** Reports one of the run's events to the client as progress (when it asked for progress). */
  readonly progress: (event: StoredRunEvent) => void;
}

/** A tool of the catalogue: its schema, the policy point it is decided on, and what it does once permitted. */
export interface McpTool<S extends TObject = TObject> {
  readonly name: McpToolName;
  readonly description: string;
  readonly input: S;
  readonly readOnly: boolean;
  /** The point and resource the PDP decides the call on (with the session in the context), and the run it names. */
  decision(
    args: Static<S>,
    session: McpSessionRef,
  ): { point: PolicyPoint; resource: { type: string; id: string }; runId?: string; approvalChannel?: ApprovalChannel };
  run(call: McpCall<Static<S>>, deps: McpToolDeps): Promise<unknown>;
}

export const waitMsOf = (seconds: number | undefined) => (seconds ?? MAX_WAIT_SECONDS) * 1000;

/** An answer that is a failure of what was asked (e.g. an invocation whose call was refused): shown with `isError`. */
export class FailedAnswer {
  constructor(readonly value: Record<string, unknown>) {}
}

/** A tool failure as a tool result: `isError`, with a code (SPEC §7 where one applies) and a message safe to show. */
export class McpToolFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "McpToolFailure";
  }
}

/** The code and message of a failed call: Steward's error codes as text; anything else is internal (and logged). */
export function failureOf(err: unknown, logger: Logger, session: McpSessionRef): { code: string; message: string } {
  if (err instanceof McpToolFailure) return { code: err.code, message: err.message };
  if (err instanceof StewardError && err.status < 500) return { code: String(err.code), message: err.message };
  if (err instanceof StewardError || isPostgresUnavailable(err)) return { code: "10503", message: "temporarily unavailable; try again" };
  const sqlState = (err as { code?: unknown } | null)?.code;
  if (typeof sqlState === "string" && /^22[0-9A-Z]{3}$/.test(sqlState)) return { code: "10430", message: "the call holds a value that cannot be stored" };
  logger.error({ err, mcp_session: session.id }, "MCP tool call failed");
  return { code: "10500", message: "internal error" };
}
