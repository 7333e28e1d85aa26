import { connectivityState, credentials, Metadata, type Client, type ChannelCredentials, type ChannelOptions, type ServiceError } from "@grpc/grpc-js";
import { PolicyDecisionClient, type DecideRequest, type DecideResponse } from "./gen/steward/v1/policy";
import {
  PolicyAdminClient,
  type ActivatePolicySetRequest,
  type CreateElevationRequest,
  type DryRunRequest,
  type DryRunResponse,
  type Elevation,
  type GetPolicySetRequest,
  type ListPolicySetsRequest,
  type ListPolicySetsResponse,
  type PolicySetInfo,
  type QueryDecisionsRequest,
  type QueryDecisionsResponse,
  type RevokeElevationRequest,
  type UploadPolicySetRequest,
  type ValidatePolicySetRequest,
  type ValidationReport,
} from "./gen/steward/v1/policy_admin";
import { ToolExecClient, type InvokeRequest, type InvokeResponse, type ListToolsResponse } from "./gen/steward/v1/tool_exec";
import { droppedCallError, streamedCalls } from "@steward/platform";

/** Per-call options: a deadline in ms and the W3C trace context to carry in metadata. */
export interface CallOptions {
  readonly deadlineMs?: number;
  readonly traceparent?: string;
  /** Wait for the channel to connect instead of failing fast (start-up calls). */
  readonly waitForReady?: boolean;
}

/**
 * A restarted peer is found again within about two seconds: grpc-js would otherwise back off up to two
 * minutes between reconnect attempts. Keepalive pings find a peer that vanished without closing its
 * connection (a killed container, a cut network: no FIN or RST ever arrives) within ~7 s; without them every
 * call would be written into the dead connection and wait out its deadline, for as long as TCP took to give up.
 * A peer that comes back on another address (a container started again gets a new IP on its network) is found
 * by resolving its name again, which grpc-js does at most once per `dns_min_time_between_resolutions_ms`
 * (default 30 s, during which the channel only knows the dead address); a failed lookup is retried on the
 * reconnect backoff above. Service configs in DNS TXT records are not used here, so they are not looked up.
 */
const channelOptions: ChannelOptions = {
  "grpc.initial_reconnect_backoff_ms": 250,
  "grpc.max_reconnect_backoff_ms": 2000,
  "grpc.keepalive_time_ms": 5000,
  "grpc.keepalive_timeout_ms": 2000,
  "grpc.keepalive_permit_without_calls": 1,
  "grpc.dns_min_time_between_resolutions_ms": 1000,
  "grpc.service_config_disable_resolution": 1,
};

/** How long a channel may stay CONNECTING before it is made anew, in ms: far above any connect in one network. */
const CONNECT_TIMEOUT_MS = 5000;

/**
 * A client whose channel is replaced once it has been CONNECTING for `connectTimeoutMs`. grpc-js puts no bound
 * on a TCP connect, and one to the old address of a container that is gone can hang for tens of seconds with
 * no error (the peer's MAC likely still cached, the SYNs go nowhere). Meanwhile the channel queues every call
 * until its deadline and asks for no new address. A new channel resolves the name afresh; the old one is
 * closed, and the calls it held fail with UNAVAILABLE "Channel closed before call started": none was sent.
 */
function renewing<C extends Client>(make: () => C, connectTimeoutMs = CONNECT_TIMEOUT_MS): { current(): C; close(): void } {
  let client = make();
  const watch = (watched: C): void => {
    const channel = watched.getChannel();
    const state = channel.getConnectivityState(false);
    if (watched !== client || state === connectivityState.SHUTDOWN) return;
    const connecting = state === connectivityState.CONNECTING;
    channel.watchConnectivityState(state, connecting ? Date.now() + connectTimeoutMs : Infinity, (timedOut) => {
      if (watched !== client) return;
      if (!timedOut) return watch(watched);
      client = make();
      watch(client);
      watched.close();
    });
  };
  watch(client);
  return { current: () => client, close: () => client.close() };
}

/** A channel's state as the readiness checks report it. */
export type ChannelState = "idle" | "connecting" | "ready" | "transient_failure" | "shutdown";

function stateOf(client: Client): ChannelState {
  // Asking with tryToConnect=true wakes an idle channel, so a peer that came back is noticed.
  switch (client.getChannel().getConnectivityState(true)) {
    case connectivityState.IDLE:
      return "idle";
    case connectivityState.CONNECTING:
      return "connecting";
    case connectivityState.READY:
      return "ready";
    case connectivityState.TRANSIENT_FAILURE:
      return "transient_failure";
    default:
      return "shutdown";
  }
}

function metadataOf(options: CallOptions): Metadata {
  const md = new Metadata();
  if (options.traceparent) md.set("traceparent", options.traceparent);
  return md;
}

function unary<Req, Res>(
  method: (req: Req, md: Metadata, opts: { deadline: Date; waitForReady?: boolean }, cb: (err: ServiceError | null, res: Res) => void) => unknown,
  req: Req,
  options: CallOptions,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    method(req, metadataOf(options), { deadline: new Date(Date.now() + (options.deadlineMs ?? 5000)), waitForReady: options.waitForReady }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

export interface PolicyDecisionApi {
  decide(req: DecideRequest, options?: CallOptions): Promise<DecideResponse>;
  state(): ChannelState;
  close(): void;
}

/**
 * How a client reaches its server: `credentials` carry the caller's mutual-TLS identity (the platform's
 * grpcChannelCredentials); without them the channel has no TLS (development and test only).
 */
export interface ClientOptions {
  readonly credentials?: ChannelCredentials;
  /** The TLS server name to send and check instead of the address's host (the peer's service name). */
  readonly serverName?: string;
}

const channelCredentials = (options: ClientOptions): ChannelCredentials => options.credentials ?? credentials.createInsecure();
const channelOptionsOf = (options: ClientOptions): ChannelOptions =>
  options.serverName ? { ...channelOptions, "grpc.ssl_target_name_override": options.serverName } : channelOptions;

/**
 * A promise-returning client of the PolicyDecision service. Decisions go on one long-lived stream
 * (`DecideEach`); a call that asks to wait for the channel to be ready (start-up) is a unary `Decide`.
 */
export function createPolicyDecisionApi(address: string, options: ClientOptions = {}): PolicyDecisionApi {
  const channel = renewing(() => new PolicyDecisionClient(address, channelCredentials(options), channelOptionsOf(options)));
  const decisions = streamedCalls(channel.current, (client) => client.decideEach());
  return {
    decide: (req, options = {}) => {
      if (!options.waitForReady) return decisions.call(req, options);
      const client = channel.current();
      return unary(client.decide.bind(client), req, options);
    },
    state: () => stateOf(channel.current()),
    close: () => {
      decisions.close();
      channel.close();
    },
  };
}

/** A tool call's options: with `go`, the call is sent held, and goes on only once `go` settles true. */
export interface InvokeOptions extends CallOptions {
  readonly go?: Promise<boolean>;
}

export interface ToolExecApi {
  listTools(options?: CallOptions): Promise<ListToolsResponse>;
  invoke(req: InvokeRequest, options?: InvokeOptions): Promise<InvokeResponse>;
  state(): ChannelState;
  close(): void;
}

/**
 * A promise-returning client of the ToolExec service. Calls go on one long-lived stream (`InvokeEach`); a call
 * that asks to wait for the channel to be ready (start-up) is a unary `Invoke`.
 */
export function createToolExecApi(address: string, options: ClientOptions = {}): ToolExecApi {
  const channel = renewing(() => new ToolExecClient(address, channelCredentials(options), channelOptionsOf(options)));
  const calls = streamedCalls(channel.current, (client) => client.invokeEach());
  return {
    listTools: (options = {}) => {
      const client = channel.current();
      return unary(client.listTools.bind(client), {}, options);
    },
    invoke: async (req, options = {}) => {
      if (!options.waitForReady) return calls.call(req, options);
      // A unary call cannot be held: it is sent once it may go on.
      if (options.go && !(await options.go)) throw droppedCallError();
      const client = channel.current();
      return unary(client.invoke.bind(client), req, options);
    },
    state: () => stateOf(channel.current()),
    close: () => {
      calls.close();
      channel.close();
    },
  };
}

export interface PolicyAdminApi {
  listPolicySets(req: ListPolicySetsRequest, options?: CallOptions): Promise<ListPolicySetsResponse>;
  getPolicySet(req: GetPolicySetRequest, options?: CallOptions): Promise<PolicySetInfo>;
  uploadPolicySet(req: UploadPolicySetRequest, options?: CallOptions): Promise<PolicySetInfo>;
  validatePolicySet(req: ValidatePolicySetRequest, options?: CallOptions): Promise<ValidationReport>;
  dryRun(req: DryRunRequest, options?: CallOptions): Promise<DryRunResponse>;
  activatePolicySet(req: ActivatePolicySetRequest, options?: CallOptions): Promise<PolicySetInfo>;
  queryDecisions(req: QueryDecisionsRequest, options?: CallOptions): Promise<QueryDecisionsResponse>;
  createElevation(req: CreateElevationRequest, options?: CallOptions): Promise<Elevation>;
  revokeElevation(req: RevokeElevationRequest, options?: CallOptions): Promise<Elevation>;
  close(): void;
}

/** A promise-returning client of the PolicyAdmin service. */
export function createPolicyAdminApi(address: string, options: ClientOptions = {}): PolicyAdminApi {
  const channel = renewing(() => new PolicyAdminClient(address, channelCredentials(options), channelOptionsOf(options)));
  const call =
    <Req, Res>(method: keyof PolicyAdminClient) =>
    (req: Req, options: CallOptions = {}): Promise<Res> => {
      const client = channel.current();
      return unary((client[method] as (...args: never[]) => unknown).bind(client) as never, req, options);
    };
  return {
    listPolicySets: call("listPolicySets"),
    getPolicySet: call("getPolicySet"),
    uploadPolicySet: call("uploadPolicySet"),
    validatePolicySet: call("validatePolicySet"),
    dryRun: call("dryRun"),
    activatePolicySet: call("activatePolicySet"),
    queryDecisions: call("queryDecisions"),
    createElevation: call("createElevation"),
    revokeElevation: call("revokeElevation"),
    close: () => channel.close(),
  };
}
