import type { TSchema, Static } from "@sinclair/typebox";
import type { Evidence, PolicyPoint } from "@steward/contract";

/** A database session: what a tool needs to write its effect in Steward's own database. */
export interface SqlSession {
  query<R extends Record<string, unknown> = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/** Who a tool runs for: the run's tenant and creator, and where in the run the call stands. */
export interface ToolContext {
  readonly tenantId: string;
  readonly userId: string;
  readonly runId: string;
  readonly stepNo: number;
  /** Aborts at the tool's timeout, which never outlasts the caller's deadline (the run's). */
  readonly signal: AbortSignal;
  /** Milliseconds left before `signal` aborts. */
  readonly remainingMs: number;
  /**
   * For an idempotent tool: the transaction that records its result. An effect written here commits with
   * the record or not at all, so it happens exactly once whatever fails in between (a server restart, a
   * killed tool-exec). Not in a transaction of the tool's own: never BEGIN or COMMIT on it.
   */
  readonly transaction?: SqlSession;
}

export interface ToolOutcome {
  readonly result: unknown;
  readonly evidence?: readonly Evidence[];
  /** A state-changing tool names the agent state the run moves to. */
  readonly nextState?: string;
  /** A classified outcome other than ok (e.g. QUERY_TIMEOUT): the tool worked, the request did not. */
  readonly resultCode?: string;
}

/** A registered tool (SPEC §5). `run` is only ever called after the PDP has permitted the call. */
export interface ToolDefinition<S extends TSchema = TSchema> {
  readonly name: string;
  readonly description: string;
  readonly input: S;
  /** Canonicalises the input before fingerprinting (trim, case-fold what does not matter). */
  readonly normalise: (input: Static<S>) => Static<S>;
  /** Checks the input instead of the schema, for a schema TypeBox did not build (an MCP tool's JSON schema). */
  readonly validate?: (input: unknown) => string | null;
  readonly safety: "read" | "write";
  readonly policyPoint: PolicyPoint;
  readonly idempotent: boolean;
  /**
   * For an idempotent tool: whether a call is answered from the result stored by its fingerprint (default true).
   * False for a tool whose answer depends on the run's state (the data tools act on the run's focused dataset,
   * which a later focus changes): it runs on every call, which is safe because it only reads, or sets that state.
   */
  readonly reuseResult?: boolean;
  readonly abortOnDeny: boolean;
  readonly requireConfirmation: boolean;
  readonly exploration: boolean;
  /** Agent states in which the tool is offered; absent means every state. */
  readonly states?: readonly string[];
  readonly run: (ctx: ToolContext, input: Static<S>) => Promise<ToolOutcome>;
}

/** A tool of any input schema, as the registry holds it (the input is checked against `input` first). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDefinition = ToolDefinition<any>;
