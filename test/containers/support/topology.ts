import { images } from "./engine";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import type Dockerode from "dockerode";
import pg from "pg";
import { SignJWT } from "jose";
import { GenericContainer, Network, Wait, getContainerRuntimeClient, type StartedNetwork, type StartedTestContainer } from "testcontainers";
import { PostgreSqlContainer, type StartedPostgreSqlContainer } from "@testcontainers/postgresql";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { freePort } from "../../support/faults/free-port";
import { callGateway } from "../../support/gateway-http";
import { waitFor } from "../../support/wait-for";
import { harnessLabels, removeLeftovers } from "./cleanup";

const TOPOLOGY_LABEL = "dev.steward.topology";
import { compileModelServer } from "./model-files";

// Steward as containers on one network, the way infra/containers/compose.yaml runs it: PostgreSQL, a NATS
// JetStream cluster, the counter model, policy, tool-exec, agent-runners and the gateway, each from the
// images setup.sh built. Every published port is fixed when the container is made, so a container that is
// killed and started again keeps its address on the host too.

export type ServiceName = "policy" | "tool-exec" | "gateway" | `agent-runner-${number}`;

export interface TopologyOptions {
  /** agent-runner containers. Default 2. */
  runners?: number;
  /** NATS nodes (streams replicated on every node). Default 3. */
  natsNodes?: number;
  /** test_counter calls per run of the counter model. Default 3. */
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
  connectNats(): Promise<NatsConnection>;
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

/** A container's log as the engine sends it without a TTY: chunks framed by an 8-byte header. */
function demux(raw: Buffer): string {
  const out: string[] = [];
  for (let i = 0; i + 8 <= raw.length; ) {
    const size = raw.readUInt32BE(i + 4);
    out.push(raw.subarray(i + 8, i + 8 + size).toString("utf8"));
    i += 8 + size;
  }
  return out.join("");
}

/**
 * True once a connection to host:port opens and the server speaks first with `greeting` (NATS sends its INFO line
 * at once), else undefined (for waitFor). A port translation left from before a restart can take a connection that
 * nobody answers: each try gives up after 2 s.
 */
function greets(host: string, port: number, greeting: string): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    socket.setTimeout(2000);
    const done = (value: true | undefined) => {
      socket.destroy();
      resolve(value);
    };
    socket.once("data", (chunk) => done(chunk.toString("latin1").startsWith(greeting) ? true : undefined));
    socket.once("error", () => done(undefined));
    socket.once("timeout", () => done(undefined));
    socket.once("end", () => done(undefined));
  });
}

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
  const secret = randomBytes(32).toString("base64url");
  // Every container of this topology, also one that failed to start (testcontainers does not hand it back).
  const labels = { ...harnessLabels, [TOPOLOGY_LABEL]: randomBytes(6).toString("hex") };
  const network = await new Network().start();
  const model = compileModelServer();
  const pools: pg.Pool[] = [];

  const teardown = async () => {
    for (const p of pools) await p.end().catch(() => undefined);
    // Removed, not stopped: nothing of a topology survives it. STEWARD_CONTAINER_LOGS=<dir> keeps their logs.
    const mine = await docker.listContainers({ all: true, filters: { label: [`${TOPOLOGY_LABEL}=${labels[TOPOLOGY_LABEL]}`] } });
    const keepLogs = process.env.STEWARD_CONTAINER_LOGS;
    if (keepLogs) {
      mkdirSync(keepLogs, { recursive: true });
      for (const c of mine) {
        const raw = (await docker.getContainer(c.Id).logs({ stdout: true, stderr: true }).catch(() => Buffer.alloc(0))) as unknown as Buffer;
        writeFileSync(join(keepLogs, `${(c.Names[0] ?? c.Id).replace(/^\//, "")}.log`), demux(raw));
      }
    }
    await Promise.all(mine.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
    await network.stop().catch(() => undefined);
    rmSync(model.dir, { recursive: true, force: true });
  };

  try {
    const natsNames = Array.from({ length: natsNodes }, (_, i) => `nats${i + 1}`);
    const routes = natsNames.map((n) => `nats://${n}:6222`).join(",");
    const [postgres, , ...nats] = await Promise.all([
      new PostgreSqlContainer(images.postgres)
        .withDatabase("steward")
        .withUsername("steward")
        .withPassword("steward")
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
          .withCommand(
            natsNodes === 1
              ? ["-js", "-sd", "/data", "-p", "4222", "-m", "8222", "-n", name]
              : ["-js", "-sd", "/data", "-p", "4222", "-m", "8222", "-n", name, "--cluster_name", "steward", "--cluster", "nats://0.0.0.0:6222", "--routes", routes],
          )
          .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
          .start(),
      ),
    ]);

    const common: Record<string, string> = {
      DATABASE_URL: "postgres://steward:steward@postgres:5432/steward",
      NATS_URL: natsNames.map((n) => `nats://${n}:4222`).join(","),
      STEWARD_NATS_REPLICAS: String(natsNodes),
      STEWARD_ENV: "test",
      STEWARD_TEST_HOOKS: "1", // the test tools (test_counter)
      POLICY_ADDR: "policy:50052",
      TOOL_EXEC_ADDR: "tool-exec:50051",
      LOG_LEVEL: "info",
      ...options.env,
    };

    // Each secret only where it is used (SPEC §10): the JWT secret in the gateway, the model's key in the runners.
    const gatewayOnly: Record<string, string> = { STEWARD_JWT_SECRET: secret };
    const runnerOnly: Record<string, string> = {
      LLM_BASE_URL: `http://model:${MODEL_PORT}/v1`,
      LLM_API_KEY: "sk-test",
      LLM_MODEL: "fake-model",
      // The scenarios keep 30+ runs of one tenant in flight: fair share must leave room for all of them.
      RUNNER_TENANT_MAX_RUNNING: "1000",
    };

    // Migrations first, once, as compose's `prepare` service does.
    await new GenericContainer(images.steward)
      .withNetwork(network)
      .withLabels(labels)
      .withEnvironment({ DATABASE_URL: common.DATABASE_URL, STEWARD_SEED_DEMO: "1" })
      .withCommand(["prepare"])
      .withWaitStrategy(Wait.forOneShotStartup())
      .withStartupTimeout(120_000)
      .start();

    const services = new Map<ServiceName, Service>();
    const startService = async (name: ServiceName, env: Record<string, string>, healthPort: number) => {
      const container = await new GenericContainer(images.steward)
        .withName(`${name}-${randomBytes(4).toString("hex")}`)
        .withNetwork(network)
        .withNetworkAliases(name)
        .withLabels(labels)
        .withEnvironment({ ...common, ...env })
        .withCommand([name.startsWith("agent-runner") ? "agent-runner" : name])
        .withExposedPorts(await published(healthPort))
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
      // Only the published ports: the suite never dials the addresses the cluster gossips.
      connectNats: () => connect({ servers: natsUrl.split(","), name: "steward-container-suite", ignoreClusterUpdates: true }),
      async token(tenant = "containerco") {
        if (!tokens.has(tenant)) {
          const jwt = await new SignJWT({ tid: tenant, roles: ["member"] })
            .setProtectedHeader({ alg: "HS256" })
            .setSubject("ops")
            .setIssuedAt()
            .setExpirationTime("2h")
            .sign(new TextEncoder().encode(secret));
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
        await waitFor(() => greets(c.getHost(), c.getMappedPort(4222), "INFO "), { timeoutMs: 120_000, intervalMs: 250, what: `${c.getName()} to greet a client again` });
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
    return self;
  } catch (err) {
    await teardown();
    throw err;
  }
}
