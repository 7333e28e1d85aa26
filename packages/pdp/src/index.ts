export { createPdp, defaultPolicyDir, type Pdp, type PdpOptions } from "./app/create-pdp";
export { NoActiveSetError, createActiveSets, type ActiveSet, type ActiveSets, type ActiveSetsOptions } from "./app/active-sets";
export {
  createDecisionHandler,
  type DecisionAnswer,
  type DecisionHandler,
  type DecisionPoint,
  type DecisionQuery,
  type EvaluateOptions,
  type Evaluation,
} from "./app/decide-request";
export { createKnownRoles, type KnownRoles, type RolesFact } from "./app/known-roles";
export { decisionOf, unknownActionDecision, type CedarVerdict, type Decision, type ElevationState } from "./domain/decide";
export { entitiesFor, resourceUid } from "./domain/entities";
export {
  createCedarEngine,
  type CedarAnswer,
  type CedarEngine,
  type CedarRequest,
  type PreparedPolicySet,
  type ValidatedPolicySet,
  type ValidationIssue,
} from "./adapters/cedar/engine";
export { createPgPolicySetStore, type PolicySetRow, type PolicySetStore } from "./adapters/pg/policy-sets";
export { StaleRolesError, createPgDecisionLog, decisionRow, type DecisionEntry, type DecisionLog, type DecisionRow } from "./adapters/pg/decision-log";
export { createPgPolicyFacts, type PolicyFacts } from "./adapters/pg/facts";
export { activationSubject, announceActivation, deferredActivations, listenForActivations } from "./adapters/nats/invalidation";
