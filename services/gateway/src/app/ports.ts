import type { RunEvent, RunSnapshot, RunState, StoredRunEvent, ThreadSnapshot, ThreadState } from "@steward/contract";
import type {
  AdminRead,
  AdminReadEntry,
  AdminReadFilter,
  AdminRun,
  AdminRunFilter,
  AppendThreadEventsInput,
  DatasetGrant,
  DatasetGrantActor,
  DatasetGrantChange,
  DecideProposalInput,
  DecideProposalOutcome,
  DocumentSummary,
  ForkThreadInput,
  ForkThreadOutcome,
  KnowledgeDocument,
  KnowledgeProposal,
  Membership,
  MembershipActor,
  MembershipChange,
  NewDocument,
  OutboxMessage,
  ProposalFilter,
} from "@steward/store";

// What the gateway's application layer needs from its database, one store per kind of record. The records are
// the store package's own types; the PostgreSQL adapters (adapters/pg/) implement these over @steward/store, and
// the route plugins and main.ts wire them.

/** A page by number (from 1) and size. */
export interface PageRequest {
  readonly page: number;
  readonly pageSize: number;
}

/** A page of records with the total of all pages. */
export interface Counted<T> {
  readonly items: T[];
  readonly total: number;
}

/** Whose records: the caller's own, within the tenant. */
export interface Owner {
  readonly tenantId: string;
  readonly userId: string;
}

/** A run's stored events after a sequence number, at most `limit` of them. */
export interface EventPage {
  readonly after: number;
  readonly limit: number;
}

/** The caller's own runs. */
export interface RunStore {
  list(owner: Owner, page: PageRequest): Promise<Counted<RunSnapshot>>;
  /** Null when the owner has no such run. */
  find(owner: Owner, runId: string): Promise<RunSnapshot | null>;
  /** A run's stored events in order, whoever owns it. */
  events(runId: string, page: EventPage): Promise<StoredRunEvent[]>;
}

/** What a writer of a run appends: the events a decision made, and the runner requests it hands the run over with. */
export interface RunWrite {
  readonly runId: string;
  readonly tenantId: string;
  readonly events: readonly RunEvent[];
  readonly commands: readonly OutboxMessage[];
  /** Recorded in the events' metadata. */
  readonly traceparent: string;
}

/** A run not yet written, with what makes its creation idempotent and the permit to create it. */
export interface NewRun extends RunWrite {
  readonly idempotencyKey: string | null;
  /** The hash of the request: a retry under the same key must match it. */
  readonly requestHash: string | null;
  /** The permit's record (a `policy_decisions` row), committed only with the run. */
  readonly permitRecord?: Readonly<Record<string, unknown>> | null;
  /** The roles the permit was decided on from memory: the run is not written (`roles_changed`) when they changed. */
  readonly permitRoles?: readonly string[] | null;
}

/**
 * The runs the gateway writes: new runs and the creator's controls, each in one commit. Their events' copies and
 * commands reach the bus behind this port (the gateway publishes them itself when it can, else the relays do).
 */
export interface RunWriter {
  /** The owner's run as its events fold, or null when the owner has no such run. */
  load(owner: Owner, runId: string): Promise<RunState | null>;
  /** Appends at `state.version`: the run after the events; a ConcurrencyError when another writer appended first. */
  append(state: RunState, write: RunWrite): Promise<RunState>;
  /**
   * Writes a new run outside a thread (in a statement shared with the runs asked for meanwhile): the run; or nothing
   * when its Idempotency-Key names a run already there (`key_used`) or its permit's remembered roles changed.
   */
  create(run: NewRun): Promise<{ readonly kind: "created"; readonly state: RunState } | { readonly kind: "key_used" | "roles_changed" }>;
  /** Adds a new run to the owner's thread, or says why the thread takes none (or that the key was used). */
  addToThread(
    threadId: string,
    owner: Owner,
    run: NewRun,
    addedAt: string,
  ): Promise<{ readonly kind: "added"; readonly state: RunState } | { readonly kind: "not_found" | "archived" | "active_run" | "key_used" }>;
  /** The run the owner created with this key, and the hash of the request that created it. */
  findByIdempotencyKey(owner: Owner, key: string): Promise<{ snapshot: RunSnapshot; requestHash: string | null } | null>;
}

/** Any run of a tenant, and the audit log of the administrators' reads of them. */
export interface AdminRunStore {
  list(tenantId: string, filter: AdminRunFilter, page: PageRequest): Promise<Counted<AdminRun>>;
  /** Null when the tenant has no such run. */
  find(tenantId: string, runId: string): Promise<AdminRun | null>;
  events(runId: string, page: EventPage): Promise<StoredRunEvent[]>;
  recordRead(entry: AdminReadEntry): Promise<AdminRead>;
  reads(tenantId: string, filter: AdminReadFilter, page: PageRequest): Promise<Counted<AdminRead>>;
}

/** The Idempotency-Key of a request was used before by the same caller: the record it made exists. */
export class IdempotencyKeyUsedError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("this Idempotency-Key was used before", options);
    this.name = "IdempotencyKeyUsedError";
  }
}

/** Threads, each kept as its folded state; `create` and `fork` reject with IdempotencyKeyUsedError for a key used before. */
export interface ThreadStore {
  /** Records a new thread's first events (one statement). */
  create(input: AppendThreadEventsInput): Promise<ThreadState>;
  /** The thread the owner created with this key, and the hash of the request that created it. */
  findByIdempotencyKey(owner: Owner, key: string): Promise<{ snapshot: ThreadSnapshot; requestHash: string | null } | null>;
  /** The owner's threads that are not archived, most recently active first. */
  list(owner: Owner, page: PageRequest): Promise<Counted<ThreadSnapshot>>;
  /** Null when the owner has no such thread. */
  find(owner: Owner, threadId: string): Promise<ThreadState | null>;
  /** The thread's runs, oldest first: those a fork inherited, then its own. */
  runs(owner: Owner, threadId: string): Promise<{ inherited: RunSnapshot[]; own: RunSnapshot[] }>;
  fork(input: ForkThreadInput): Promise<ForkThreadOutcome>;
  /** Archives the owner's thread (once); null when there is none. */
  archive(input: { threadId: string; owner: Owner; at: string; traceparent?: string }): Promise<ThreadState | null>;
}

/** A tenant's knowledge documents. */
export interface KnowledgeStore {
  /** Adds and chunks a document; its id. */
  add(doc: NewDocument): Promise<string>;
  list(tenantId: string, page: PageRequest): Promise<Counted<DocumentSummary>>;
  /** Null when the tenant has no such document. */
  read(tenantId: string, id: string): Promise<KnowledgeDocument | null>;
  /** False when the tenant has no such document. */
  remove(tenantId: string, id: string): Promise<boolean>;
}

/** Knowledge proposals made by runs, and their review. */
export interface ProposalStore {
  list(filter: ProposalFilter, page: PageRequest): Promise<Counted<KnowledgeProposal>>;
  /** Null when the tenant has no such proposal. */
  find(tenantId: string, id: string): Promise<KnowledgeProposal | null>;
  /** Applies or dismisses a pending proposal in one transaction. */
  decide(input: DecideProposalInput): Promise<DecideProposalOutcome>;
}

/** A tenant's memberships (a user's roles), each change recorded with who and why. */
export interface MemberStore {
  list(tenantId: string, page: PageRequest & { role?: string }): Promise<Counted<Membership>>;
  /** Null when the user has no membership in the tenant. */
  find(tenantId: string, userId: string): Promise<Membership | null>;
  /** `changed` is false when the user held the role already. */
  grant(tenantId: string, userId: string, role: string, by: MembershipActor): Promise<{ membership: Membership; changed: boolean }>;
  /** Null when the user does not hold the role in the tenant. */
  revoke(tenantId: string, userId: string, role: string, by: MembershipActor): Promise<Membership | null>;
  changes(tenantId: string, filter: { userId?: string; afterId?: number; limit: number }): Promise<MembershipChange[]>;
}

/** A tenant's grants of named datasets to its members, each change recorded with who and why. */
export interface DatasetGrantStore {
  list(tenantId: string): Promise<DatasetGrant[]>;
  /** `changed` is false when it was granted so already. */
  grant(tenantId: string, dataset: string, roles: readonly string[], by: DatasetGrantActor): Promise<{ grant: DatasetGrant; changed: boolean }>;
  /** Null when the tenant holds no grant of that name. */
  revoke(tenantId: string, dataset: string, by: DatasetGrantActor): Promise<DatasetGrant | null>;
  changes(tenantId: string, filter: { dataset?: string; afterId?: number; limit: number }): Promise<DatasetGrantChange[]>;
}
