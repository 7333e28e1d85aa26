export { migrate, ensureDatabase, dropDatabase, migrationsDir } from "./migrate/migrate";
export { EventTooLargeError, assertEventsFit } from "./event-store/event-size";
export { readStream } from "./event-store/read-stream";
export { readAll, type PositionedEvent } from "./event-store/read-all";
export { enqueueOutbox, type OutboxMessage } from "./outbox/enqueue";
export { RELAYED_HEADER, createOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from "./outbox/relay";
export { createDirectPublisher, type DirectPublisher, type DirectPublisherOptions, type OwnPending } from "./outbox/direct-publisher";
export { UNPUBLISHED_SQL } from "./outbox/unpublished";
export type { OutboxRow } from "./outbox/outbox-row";
export { PUBLISHED_THROUGH_HEADER, appendRunEvents, type AppendRunEventsInput, type AppendRunEventsResult } from "./runs/append-run-events";
export { createRuns, type NewRunInput, type NewRunOutcome } from "./runs/create-runs";
export { appendRuns, createRunAppender, type RunAppender } from "./runs/append-runs";
export { createRunStreams, type AppendMore, type Appended, type OpenRun, type RunStream, type RunStreams, type RunStreamsDeps } from "./runs/run-streams";
export { ownPublishing, type OwnPublishing } from "./runs/own-publishing";
export { failUnfoldableRun } from "./runs/fail-unfoldable-run";
export { projectRun } from "./runs/project-run";
export { rebuildRunsProjection } from "./runs/rebuild-projection";
export { findOwnRun, listOwnRuns, findByIdempotencyKey } from "./runs/queries";
export { listEndedThreadRuns } from "./runs/ended-thread-runs";
export { listTenantRuns, findTenantRun, type AdminRun, type AdminRunFilter } from "./runs/admin-runs";
export { recordAdminRead } from "./audit/record-admin-read";
export { listAdminReads, type AdminReadFilter } from "./audit/list-admin-reads";
export type { AdminRead, AdminReadEntry, AdminReadRoute } from "./audit/admin-read";
export { findOverdueRuns, findUnansweredRuns, redriveStrandedRuns } from "./runs/overdue";
export { claimRun, extendLease, extendLeases, leaseHolder, releaseLease, type ClaimAdmission, type ClaimOutcome } from "./runs/lease";
export { NEW_RUN_HEADER, admitRun, admitRuns, admitDeferred, tenantsWithDeferredRuns, type Admission, type AdmissionAsk } from "./runs/admission";
export { endDrive, type EndDriveInput } from "./runs/end-drive";
export { batchedAdmissions, type Admissions } from "./runs/admission-batches";
export { appendThreadEvents, type AppendThreadEventsInput } from "./threads/append-thread-events";
export { addRunToThread, type AddRunToThreadInput, type AddRunToThreadOutcome } from "./threads/add-run-to-thread";
export { archiveThread } from "./threads/archive-thread";
export { forkThread, type ForkThreadInput, type ForkThreadOutcome } from "./threads/fork-thread";
export { findOwnThreadState, listOwnThreads, listThreadRuns, findThreadByIdempotencyKey } from "./threads/queries";
export { chunkText } from "./knowledge/chunk";
export {
  addDocument,
  insertDocument,
  KNOWLEDGE_DOCUMENTS_PER_TENANT,
  KnowledgeFullError,
  type NewDocument,
  type SqlRunner,
  type DocumentProvenance,
} from "./knowledge/add-document";
export { searchKnowledge } from "./knowledge/search";
export { listDocuments, deleteDocument, readDocument, type DocumentSummary, type KnowledgeDocument } from "./knowledge/documents";
export { readBacklog, type Backlog } from "./status/backlog";
export { readTenantBacklog, type OpenRuns, type TenantBacklog } from "./status/tenant-backlog";
export { queueProposal, type QueueProposalInput, type QueueProposalOutcome } from "./proposals/queue-proposal";
export { decideProposal, type DecideProposalInput, type DecideProposalOutcome } from "./proposals/decide-proposal";
export { listProposals, findProposal, type ProposalFilter } from "./proposals/queries";
export type { KnowledgeProposal, ProposalLimits, ProposalStatus } from "./proposals/proposal";
export { leaseRequests, sweepRateLimitBuckets, type LeaseWant, type LeaseGrant } from "./rate-limits/lease-requests";
export { grantRole } from "./memberships/grant-role";
export { revokeRole } from "./memberships/revoke-role";
export { listMembers, findMember } from "./memberships/list-members";
export { listMembershipChanges } from "./memberships/membership-changes";
export type { Membership, MembershipChange, MembershipActor } from "./memberships/membership";
export { grantDataset } from "./datasets/grant-dataset";
export { revokeDataset } from "./datasets/revoke-dataset";
export { listDatasetGrants, listDatasetGrantChanges } from "./datasets/list-grants";
export { datasetsFor, focusDataset, focusedDataset } from "./datasets/dataset-access";
export { DATASET_NAME, type DatasetGrant, type DatasetGrantChange, type DatasetGrantActor } from "./datasets/dataset-grant";
export { parseDatasetTenants, NO_DATASET_TENANTS, EVERY_TENANT, type DatasetTenants } from "./datasets/dataset-tenants";
export { recordMcpSessionOpened } from "./mcp-sessions/record-session-opened";
export { recordMcpSessionClosed } from "./mcp-sessions/record-session-closed";
export { listMcpSessions } from "./mcp-sessions/list-sessions";
export type { McpSessionFilter, McpSessionMode, McpSessionOpening, McpSessionRecord } from "./mcp-sessions/mcp-session";
