import { images } from "./engine";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Dockerode from "dockerode";
import pg from "pg";
import { SignJWT } from "jose";
import { GenericContainer, Network, Wait, getContainerRuntimeClient, type StartedNetwork, type StartedTestContainer } from "testcontainers";
import { PostgreSqlContainer, type StartedPostgreSqlContainer } from "@testcontainers/postgresql";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { ServiceIdentity } from "@steward/platform";
import { freePort } from "../../support/faults/free-port";
import { callGateway } from "../../support/gateway-http";
import { waitFor } from "../../support/wait-for";
import { startApprover, type Approver } from "./approver";
import { harnessLabels, removeLeftovers } from "./cleanup";
import { demux, greets } from "./container-io";
import { compileModelServer } from "./model-files";
import { makePlanes, type Planes } from "./planes";

const TOPOLOGY_LABEL = "dev.steward.topology";

// Steward as containers on one network, the way infra/containers/compose.yaml runs it: PostgreSQL, a NATS
// JetStream cluster, the suite's model, policy, tool-exec, agent-runners and the gateway, each from the images
// setup.sh built, in production (STEWARD_ENV=production, no test hooks) with the internal planes compose has:
// mutual TLS, a NATS user per service, a PostgreSQL role per service (planes.ts). The runs' person approves every
// note they save (approver.ts). Every published port is fixed when the container is made, so a container that is
// killed and started again keeps its address on the host too.

export type ServiceName = "policy" | "tool-exec" | "gateway" | `agent-runner-${number}`;

export interface TopologyOptions {
  /** agent-runner containers. Default 2. */
  runners?: number;
  /** NATS nodes (streams replicated on every node). Default 3. */
  natsNodes?: number;
  /** save_note calls per run of the note model. Default 3. */
  toolSteps?: number;
  /** Extra environment for every Steward service. */
  env?: Record<string, string>;
}

export interface Service {
  readonly name: ServiceName;
  readonly container: StartedTestContainer;
  /** /readyz on the host. */
  readonly readyUrl: string;
}

export interface Topology {
  readonly network: StartedNetwork;
  readonly postgres: StartedPostgreSqlContainer;
  readonly nats: StartedTestContainer[];
  readonly services: Map<ServiceName, Service>;
  readonly runnerNames: ServiceName[];
  readonly gatewayUrl: string;
  /** PostgreSQL from the host. */
  readonly pool: pg.Pool;
  /** The NATS nodes from the host, as seeds. */
  readonly natsUrl: string;
  readonly toolSteps: number;
  /** The namespace the services use on the bus ("" here: the cluster is theirs alone). */
  readonly namespace: string;
  /** The keys and passwords the services were given. */
  readonly planes: Planes;
  /** The person approving the runs' notes. */
  readonly approver: Approver;
  /** NATS as the operator (every permission), as the suite inspects the bus. */
  connectNats(): Promise<NatsConnection>;
  /** NATS as `user` with `password` (null: no user at all); no reconnects. */
  connectNatsAs(user: string | null, password?: string): Promise<NatsConnection>;
  /** tool-exec's or policy's gRPC port on the host. */
  grpcAddr(name: "tool-exec" | "policy"): string;
  /** A service's own PostgreSQL URL (its role), on the published port. */
  roleUrl(identity: ServiceIdentity): string;
  /** A member's token for `tenant` (default "containerco"; the demo knowledge base is tenant "demo"). */
  token(tenant?: string): Promise<string>;
  http(method: string, path: string, body?: unknown, tenant?: string): Promise<{ status: number; body: any }>;
  /** The engine's handle on a container (kill, start, pause, network moves). */
  handle(container: StartedTestContainer): Dockerode.Container;
  /** SIGKILL to the container's process; the container stays, stopped. */
  kill(container: StartedTestContainer): Promise<void>;
  /** Starts a stopped container again (as a restart policy would). */
  start(container: StartedTestContainer): Promise<void>;
  /**
   * A NATS node's restart by the engine (stop, then start), waiting (bounded) until it greets a client on its
   * published port again: the server answering, not a log line, which a busy engine was seen to hand back late.
   */
  restartNats(container: StartedTestContainer): Promise<void>;
  /**
   * PostgreSQL's restart by the engine (stop, then start), waiting (bounded) until a new connection answers a
   * query: the server serving, not its log line, which the engine's log stream was seen to end before on a busy
   * machine ("Log stream ended and message … was not received").
   */
  restartPostgres(container: StartedTestContainer): Promise<void>;
  /** Waits (bounded) until the service answers /readyz with 200. */
  waitReady(name: ServiceName, timeoutMs?: number): Promise<void>;
  /** Cuts the container off the network, or puts it back with its aliases. */
  disconnect(container: StartedTestContainer): Promise<void>;
  reconnect(container: StartedTestContainer, alias: string): Promise<void>;
  /** The last lines the container wrote. */
  logTail(container: StartedTestContainer, lines?: number): Promise<string>;
  teardown(): Promise<void>;
}

const MODEL_PORT = 8000;
const HEALTH = { policy: 8083, "tool-exec": 8082, runner: 8081, gateway: 8080 } as const;
const GRPC = { policy: 50052, "tool-exec": 50051 } as const;
/** The issuer and audience compose.yaml gives the gateway by default. */
const JWT = { issuer: "steward", audience: "steward-api" } as const;
/** The tenant of the suite's runs. */
const TENANT = "containerco";
const NATS_CONFIG = "/etc/nats/steward.conf";

async function published(port: number) {
  return { container: port, host: await freePort() };
}

export async function startTopology(options: TopologyOptions = {}): Promise<Topology> {
  const runners = options.runners ?? 2;
  const natsNodes = options.natsNodes ?? 3;
  const toolSteps = options.toolSteps ?? 3;
  await removeLeftovers();
  const client = await getContainerRuntimeClient();
  const docker = client.container.dockerode;
  // Every container of this topology, also one that failed to start (testcontainers does not hand it back).
  const labels = { ...harnessLabels, [TOPOLOGY_LABEL]: randomBytes(6).toString("hex") };
  const network = await new Network().start();
  const model = compileModelServer();
  const planes = makePlanes(natsNodes);
  const pools: pg.Pool[] = [];
  let approver: Approver | undefined;

  const teardown = async () => {
    await approver?.stop();
    for (const p of pools) await p.end().catch(() => undefined);
    // Removed, not stopped: nothing of a topology survives it. STEWARD_CONTAINER_LOGS=<dir> keeps their logs.
    const mine = await docker.listContainers({ all: true, filters: { label: [`${TOPOLOGY_LABEL}=${labels[TOPOLOGY_LABEL]}`] } });
    const keepLogs = process.env.STEWARD_CONTAINER_LOGS;
    if (keepLogs) {
      mkdirSync(keepLogs, { recursive: true });
      for (const c of mine) {
        const raw = (await docker
          .getContainer(c.Id)
          .logs({ stdout: true, stderr: true })
          .catch(() => Buffer.alloc(0))) as unknown as Buffer;
        writeFileSync(join(keepLogs, `${(c.Names[0] ?? c.Id).replace(/^\//, "")}.log`), demux(raw));
      }
    }
    await Promise.all(
      mine.map((c) =>
        docker
          .getContainer(c.Id)
          .remove({ force: true, v: true })
          .catch(() => undefined),
      ),
    );
    await network.stop().catch(() => undefined);
    rmSync(model.dir, { recursive: true, force: true });
    planes.remove();
  };

  try {
    const natsNames = Array.from({ length: natsNodes }, (_, i) => `nats${i + 1}`);
    const [postgres, , ...nats] = await Promise.all([
      new PostgreSqlContainer(images.postgres)
        .withDatabase("steward")
        .withUsername("steward")
        .withPassword(planes.credentials.postgres.owner)
        .withNetwork(network)
        .withNetworkAliases("postgres")
        .withExposedPorts(await published(5432))
        .withLabels(labels)
        // No systemd in the images: the module's health check would never run; its log line and port do.
        .withWaitStrategy(Wait.forAll([Wait.forLogMessage(/ready to accept connections/), Wait.forListeningPorts()]))
        .withCommand(["-c", "max_connections=200"])
        .start(),
      new GenericContainer(images.node)
        .withNetwork(network)
        .withNetworkAliases("model")
        .withLabels(labels)
        .withCopyDirectoriesToContainer([{ source: model.dir, target: "/model" }])
        .withEnvironment({ PORT: String(MODEL_PORT), TOOL_STEPS: String(toolSteps) })
        .withCommand(["node", `/model/${model.entry}`])
        .withWaitStrategy(Wait.forLogMessage(/model listening/))
        .start(),
      ...natsNames.map(async (name) =>
        new GenericContainer(images.nats)
          .withName(`${name}-${randomBytes(4).toString("hex")}`)
          .withNetwork(network)
          .withNetworkAliases(name)
          .withLabels(labels)
          .withExposedPorts(await published(4222))
          // Users, permissions and (with more than one node) the cluster and its route login come from the file.
          .withCopyContentToContainer([planes.natsConfig(NATS_CONFIG)])
          .withCommand(["-c", NATS_CONFIG, "-js", "-sd", "/data", "-p", "4222", "-m", "8222", "-n", name])
          .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
          .start(),
      ),
    ]);

    const common: Record<string, string> = {
      NATS_URL: natsNames.map((n) => `nats://${n}:4222`).join(","),
      STEWARD_NATS_REPLICAS: String(natsNodes),
      // As compose.yaml: production, and no test hook anywhere (the notes are a real tool's).
      STEWARD_ENV: "production",
      POLICY_ADDR: "policy:50052",
      TOOL_EXEC_ADDR: "tool-exec:50051",
      LOG_LEVEL: "info",
      ...options.env,
    };

    // Each secret only where it is used (SPEC §10): the JWT secret (gateway.env) in the gateway, the model's key in
    // the runners; each service's TLS files, NATS user and role from its own planes.
    const gatewayOnly: Record<string, string> = { STEWARD_JWT_ISSUER: JWT.issuer, STEWARD_JWT_AUDIENCE: JWT.audience };
    const runnerOnly: Record<string, string> = {
      LLM_BASE_URL: `http://model:${MODEL_PORT}/v1`,
      LLM_API_KEY: "sk-test",
      LLM_MODEL: "fake-model",
      // The scenarios keep 30+ runs of one tenant in flight: fair share must leave room for all of them.
      RUNNER_TENANT_MAX_RUNNING: "1000",
    };

    // Migrations and the roles' logins first, once, as compose's `prepare` service does. Waited on by its last log
    // line, as the services are: a wait on its exit, which reads the container's state each second, once timed out
    // in all three suites of a run at once, leaving no trace of what the container did. A timeout now says.
    const prepareName = `prepare-${randomBytes(4).toString("hex")}`;
    await new GenericContainer(images.steward)
      .withName(prepareName)
      .withNetwork(network)
      .withLabels(labels)
      .withEnvironment({ ...planes.prepareEnv(), STEWARD_SEED_DEMO: "1" })
      .withCommand(["prepare"])
      .withWaitStrategy(Wait.forLogMessage(/"msg":"prepared"/))
      .withStartupTimeout(120_000)
      .start()
      .catch(async (err: Error) => {
        const raw = (await docker
          .getContainer(prepareName)
          .logs({ stdout: true, stderr: true, tail: 20 })
          .catch(() => Buffer.alloc(0))) as unknown as Buffer;
        throw new Error(`${prepareName} did not prepare: ${err.message}\n${demux(raw).trimEnd()}`);
      });

    const services = new Map<ServiceName, Service>();
    const startService = async (name: ServiceName, env: Record<string, string>, healthPort: number) => {
      const identity: ServiceIdentity = name.startsWith("agent-runner") ? "agent-runner" : (name as ServiceIdentity);
      const grpcPort = identity === "tool-exec" || identity === "policy" ? [await published(GRPC[identity])] : [];
      const container = await new GenericContainer(images.steward)
        .withName(`${name}-${randomBytes(4).toString("hex")}`)
        .withNetwork(network)
        .withNetworkAliases(name)
        .withLabels(labels)
        .withEnvironment({ ...common, ...planes.env(identity), ...env })
        .withCopyContentToContainer(planes.tlsFiles(identity))
        .withCommand([identity])
        .withExposedPorts(await published(healthPort), ...grpcPort)
        .withWaitStrategy(Wait.forHttp("/readyz", healthPort).forStatusCode(200))
        .withStartupTimeout(120_000)
        .start();
      services.set(name, { name, container, readyUrl: `http://127.0.0.1:${container.getMappedPort(healthPort)}/readyz` });
    };
    const runnerNames = Array.from({ length: runners }, (_, i) => `agent-runner-${i + 1}` as ServiceName);
    await Promise.all([
      startService("policy", { POLICY_ADDR: "0.0.0.0:50052" }, HEALTH.policy),
      startService("tool-exec", { TOOL_EXEC_ADDR: "0.0.0.0:50051" }, HEALTH["tool-exec"]),
      ...runnerNames.map((name) => startService(name, { ...runnerOnly, RUNNER_ID: name }, HEALTH.runner)),
      startService("gateway", { ...gatewayOnly, GATEWAY_PORT: String(HEALTH.gateway) }, HEALTH.gateway),
    ]);

    // A restart of the container can leave a pooled connection half-open behind the port mapping (no FIN or RST
    // reaches it): a query on it would wait for TCP to give up, minutes later. Bounded, it fails and the pool
    // drops that client (a query that fails releases its client with the error); the next probe reconnects.
    // A connection opened while the container is down fares alike: its SYN is translated to the container's
    // old address, and the retransmissions keep that translation after the container is back, so the connect
    // waits out TCP's SYN retries (about 130 s, longer than the suite's bound) though the server answers
    // every new connection. Bounded too: the checkout fails and the next probe connects afresh.
    const pool = new pg.Pool({
      connectionString: postgres.getConnectionUri(),
      max: 4,
      connectionTimeoutMillis: 5_000,
      query_timeout: 10_000,
      keepAlive: true,
    });
    pools.push(pool);
    pool.on("error", () => undefined); // a restart of the container ends idle clients; the next query reconnects
    const gatewayUrl = services.get("gateway")!.readyUrl.replace(/\/readyz$/, "");
    const natsUrl = nats.map((n) => `nats://127.0.0.1:${n.getMappedPort(4222)}`).join(",");
    const tokens = new Map<string, string>();
    const secret = new TextEncoder().encode(planes.credentials.jwt.gateway);
    // Only the published ports: the suite never dials the addresses the cluster gossips.
    const connectNatsAs = (user: string | null, password?: string) =>
      connect({
        servers: natsUrl.split(","),
        name: `steward-container-suite${user ? `-${user}` : ""}`,
        ignoreClusterUpdates: true,
        ...(user ? { user, pass: password } : {}),
        ...(user === "operator" ? {} : { reconnect: false }),
      });

    const self: Topology = {
      network,
      postgres,
      nats,
      services,
      runnerNames,
      gatewayUrl,
      pool,
      natsUrl,
      toolSteps,
      namespace: "",
      planes,
      get approver() {
        return approver!;
      },
      connectNats: () => connectNatsAs("operator", planes.credentials.nats.operator),
      connectNatsAs,
      grpcAddr: (name) => `127.0.0.1:${services.get(name)!.container.getMappedPort(GRPC[name])}`,
      roleUrl: (identity) => planes.roleUrl(identity, `127.0.0.1:${postgres.getMappedPort(5432)}`),
      async token(tenant = TENANT) {
        if (!tokens.has(tenant)) {
          const jwt = await new SignJWT({ tid: tenant, roles: ["member"] })
            .setProtectedHeader({ alg: "HS256" })
            .setSubject("ops")
            .setIssuer(JWT.issuer)
            .setAudience(JWT.audience)
            .setIssuedAt()
            .setExpirationTime("2h")
            .sign(secret);
          tokens.set(tenant, jwt);
        }
        return tokens.get(tenant)!;
      },
      async http(method, path, body, tenant) {
        return callGateway(gatewayUrl, await self.token(tenant), method, path, body);
      },
      handle: (c) => docker.getContainer(c.getId()),
      async kill(c) {
        await docker.getContainer(c.getId()).kill({ signal: "SIGKILL" });
        await docker.getContainer(c.getId()).wait();
      },
      async start(c) {
        await docker.getContainer(c.getId()).start();
      },
      async restartNats(c) {
        await docker.getContainer(c.getId()).restart({ t: 10 });
        await waitFor(() => greets(c.getHost(), c.getMappedPort(4222), "INFO "), {
          timeoutMs: 120_000,
          intervalMs: 250,
          what: `${c.getName()} to greet a client again`,
        });
      },
      async restartPostgres(c) {
        await docker.getContainer(c.getId()).restart({ t: 10 });
        await waitFor(
          async () => {
            const client = new pg.Client({ connectionString: postgres.getConnectionUri(), connectionTimeoutMillis: 2_000, query_timeout: 2_000 });
            client.on("error", () => undefined);
            try {
              await client.connect();
              await client.query("SELECT 1");
              return true;
            } finally {
              await client.end().catch(() => undefined);
            }
          },
          { timeoutMs: 120_000, intervalMs: 250, what: "PostgreSQL to answer a query again" },
        );
      },
      async waitReady(name, timeoutMs = 90_000) {
        const url = services.get(name)!.readyUrl;
        await waitFor(
          async () => {
            const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
            await res.arrayBuffer();
            return res.status === 200 ? true : undefined;
          },
          { timeoutMs, intervalMs: 200, what: `${name} to answer /readyz with 200` },
        );
      },
      async disconnect(c) {
        await docker.getNetwork(network.getId()).disconnect({ Container: c.getId(), Force: true });
      },
      async reconnect(c, alias) {
        await docker.getNetwork(network.getId()).connect({ Container: c.getId(), EndpointConfig: { Aliases: [alias] } });
      },
      async logTail(c, lines = 30) {
        const raw = (await docker.getContainer(c.getId()).logs({ stdout: true, stderr: true, tail: lines })) as unknown as Buffer;
        return demux(raw).trimEnd();
      },
      teardown,
    };
    approver = startApprover({ pool, gatewayUrl, tenant: TENANT, token: () => self.token() });
    return self;
  } catch (err) {
    await teardown();
    throw err;
  }
}
