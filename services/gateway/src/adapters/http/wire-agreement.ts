import type { Static, TSchema } from "@sinclair/typebox";
import type { AdminRunView, DecisionRecord, DocumentSummary as DocumentSummaryView, KnowledgeProposal, RunSnapshot, StoredEventView } from "@steward/contract";
import type { AdminRun } from "./routes/admin-runs";
import type { Decision } from "./routes/admin";
import type { DocumentSummary } from "./routes/knowledge";
import type { Proposal } from "./routes/proposals";
import type { EventItem, RunSnapshotSchema } from "./run-responses";

/*
 * The contract's wire types (what the CLI and the console read) and the schemas the routes are documented by
 * (docs/openapi.json) must say the same: the typecheck fails here when a field is added, renamed or retyped in
 * one and not the other. An event's `data` is typed per event in the contract and left open in the schema, so
 * for events only the fields' names are compared.
 */

/** Read-only and writable arrays and fields count as the same: the contract is read-only, the schemas are not. */
type Writable<T> = T extends readonly (infer U)[] ? Writable<U>[] : T extends object ? { -readonly [K in keyof T]: Writable<T[K]> } : T;
type Same<A, B> = [Writable<A>] extends [Writable<B>] ? ([Writable<B>] extends [Writable<A>] ? true : false) : false;
type Agrees<S extends TSchema, T> = Same<Static<S>, T>;
type SameKeys<S extends TSchema, T> = Same<keyof Static<S>, keyof T>;

export const wireAgreement: {
  runSnapshot: Agrees<typeof RunSnapshotSchema, RunSnapshot>;
  adminRun: Agrees<typeof AdminRun, AdminRunView>;
  documentSummary: Agrees<typeof DocumentSummary, DocumentSummaryView>;
  proposal: Agrees<typeof Proposal, KnowledgeProposal>;
  decision: Agrees<typeof Decision, DecisionRecord>;
  storedEvent: SameKeys<typeof EventItem, StoredEventView>;
} = { runSnapshot: true, adminRun: true, documentSummary: true, proposal: true, decision: true, storedEvent: true };
