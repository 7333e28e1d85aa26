import { RunErrorCode, ToolResultCode } from "@steward/contract";

/**
 * A label's values: a closed list (anything else is counted as "other"), or `capped` for values the
 * configuration bounds (tool names, provider profiles, breakers, pools, routes), of which at most
 * `maxDistinctValues` are kept per metric and the rest become "other".
 */
export type LabelValues = readonly string[] | "capped";

export interface MetricDef {
  readonly name: string;
  readonly help: string;
  readonly kind: "counter" | "gauge" | "histogram";
  readonly labels: Readonly<Record<string, LabelValues>>;
  /** Histogram buckets, in seconds. */
  readonly buckets?: readonly number[];
}

/** The value a label takes when the given one is not allowed (unknown, too many, too long, id-shaped). */
export const otherLabelValue = "other";
/** The value a code label takes when there is no code (a success). */
export const noCode = "none";

const runStates = ["succeeded", "failed", "cancelled"] as const;
const runCodes = [noCode, ...Object.values(RunErrorCode).map(String)];
const toolResults = [...Object.values(ToolResultCode), ...Object.values(RunErrorCode).map(String), "error"];
/** Milliseconds to minutes: a PDP answer, a model call, a slow tool. */
const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * Every metric a Steward service registers beyond Node's defaults: one list, so that the dashboard and its
 * test read the same names the services register. Never a tenant, user, run, prompt or token as a label.
 */
export const metricCatalog = {
  runsFinished: {
    name: "steward_runs_finished_total",
    help: "Runs this runner ended, by terminal state and run error code",
    kind: "counter",
    labels: { state: runStates, code: runCodes },
  },
  stepDuration: {
    name: "steward_run_step_duration_seconds",
    help: "One step of the loop: a model call and the tool calls it asked for",
    kind: "histogram",
    labels: {},
    buckets: latencyBuckets,
  },
  modelCallDuration: {
    name: "steward_model_call_duration_seconds",
    help: "Model calls by provider profile and outcome",
    kind: "histogram",
    labels: { profile: "capped", outcome: ["ok", "unavailable", "aborted", "error"] },
    buckets: latencyBuckets,
  },
  runnerToolCallDuration: {
    name: "steward_runner_tool_call_duration_seconds",
    help: "Tool calls as the runner sees them (through tool-exec), by tool and result code",
    kind: "histogram",
    labels: { tool: "capped", result: toolResults },
    buckets: latencyBuckets,
  },
  redeliveries: {
    name: "steward_runner_redeliveries_total",
    help: "Run commands this runner received again (delivery count above 1)",
    kind: "counter",
    labels: {},
  },
  consumerPending: {
    name: "steward_consumer_pending_messages",
    help: "The runners' JetStream consumer: messages not yet delivered (pending) and delivered but not acknowledged (ack_pending)",
    kind: "gauge",
    labels: { consumer: "capped", kind: ["pending", "ack_pending"] },
  },
  consumerRedelivered: {
    name: "steward_consumer_redelivered_messages",
    help: "The runners' JetStream consumer: messages delivered more than once and not yet acknowledged",
    kind: "gauge",
    labels: { consumer: "capped" },
  },
  outboxBacklog: {
    name: "steward_outbox_backlog_messages",
    help: "Outbox rows waiting to be published (set-aside rows excluded), polled",
    kind: "gauge",
    labels: {},
  },
  outboxOldestAge: {
    name: "steward_outbox_oldest_age_seconds",
    help: "Age of the oldest outbox row waiting to be published (0 when none waits), polled",
    kind: "gauge",
    labels: {},
  },
  outboxPublishLag: {
    name: "steward_outbox_publish_lag_seconds",
    help: "From an outbox row's commit to its publish, sampled from the rows published since the last poll",
    kind: "histogram",
    labels: {},
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  },
  breakerState: {
    name: "steward_breaker_state",
    help: "1 for each circuit breaker's current state, 0 for its other states",
    kind: "gauge",
    labels: { breaker: "capped", state: ["closed", "open", "half_open"] },
  },
  pgPoolClients: {
    name: "steward_pg_pool_clients",
    help: "A PostgreSQL pool's clients: total, idle, and callers waiting for one",
    kind: "gauge",
    labels: { pool: "capped", state: ["total", "idle", "waiting"] },
  },
  toolCallDuration: {
    name: "steward_tool_call_duration_seconds",
    help: "Tool calls in tool-exec (PDP decision and the tool), by tool and result code",
    kind: "histogram",
    labels: { tool: "capped", result: toolResults },
    buckets: latencyBuckets,
  },
  pdpAskDuration: {
    name: "steward_pdp_ask_duration_seconds",
    help: "Asking the policy decision point, by effect (error: no answer)",
    kind: "histogram",
    labels: { effect: ["permit", "deny", "error"] },
    buckets: latencyBuckets,
  },
  policyDecisions: {
    name: "steward_policy_decisions_total",
    help: "Decisions of the policy decision point, by effect and code",
    kind: "counter",
    labels: { effect: ["permit", "deny"], code: runCodes },
  },
  policyDecisionDuration: {
    name: "steward_policy_decision_duration_seconds",
    help: "One decision in the policy service, facts and decision log included",
    kind: "histogram",
    labels: { effect: ["permit", "deny", "error"] },
    buckets: latencyBuckets,
  },
  httpRequestDuration: {
    name: "steward_http_request_duration_seconds",
    help: "Gateway HTTP requests by method, route pattern and status class",
    kind: "histogram",
    labels: {
      method: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      route: "capped",
      status_class: ["1xx", "2xx", "3xx", "4xx", "5xx"],
    },
    buckets: latencyBuckets,
  },
  sseStreamsOpen: {
    name: "steward_sse_streams_open",
    help: "Server-sent event streams the gateway holds open",
    kind: "gauge",
    labels: {},
  },
} as const satisfies Record<string, MetricDef>;

export type MetricName = (typeof metricCatalog)[keyof typeof metricCatalog]["name"];
