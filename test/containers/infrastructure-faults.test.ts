import { jetstreamManager } from "@nats-io/jetstream";
import { busNames } from "@steward/contract";
import { outage } from "../support/faults/report";
import { waitFor } from "../support/wait-for";
import { runContainerFault, type ContainerFaultReport } from "./support/fault-run";
import { startTopology, type Topology } from "./support/topology";

// PostgreSQL and the NATS cluster fail under 30 multi-step runs in flight; Steward (two runners) must end
// every run once, lose no event and repeat no side effect, with nothing done by hand.

jest.setTimeout(600_000);

/** Which node (index into topology.nats) leads the command stream now. */
async function commandStreamLeader(t: Topology): Promise<number> {
  const nc = await t.connectNats();
  try {
    const info = await (await jetstreamManager(nc)).streams.info(busNames(t.namespace).commandStream);
    const index = Number(/^nats(\d+)$/.exec(info.cluster?.leader ?? "")?.[1]) - 1;
    if (!(index >= 0 && index < t.nats.length)) throw new Error(`no leader for the command stream: ${JSON.stringify(info.cluster)}`);
    return index;
  } finally {
    await nc.close();
  }
}

describe("Steward as containers survives its infrastructure", () => {
  let t: Topology;

  beforeAll(async () => {
    t = await startTopology({ runners: 2 });
  });

  afterAll(async () => {
    await t?.teardown();
  });

  function expectClean(report: ContainerFaultReport): void {
    expect(report.violations).toEqual([]);
    expect(report.states).toEqual({ succeeded: report.runs });
  }

  it("PostgreSQL's container restarted", async () => {
    expectClean(
      await runContainerFault(t, {
        name: "postgres container restart",
        touches: (topology) => [topology.postgres],
        inject: (topology) => topology.restartPostgres(topology.postgres),
      }),
    );
  });

  it("PostgreSQL's container paused for 20 s", async () => {
    expectClean(
      await runContainerFault(t, {
        name: "postgres paused 20 s",
        touches: () => [],
        async inject(topology) {
          await topology.handle(topology.postgres).pause();
          await outage(20_000);
          await topology.handle(topology.postgres).unpause();
        },
      }),
    );
  });

  it("the NATS node leading the command stream killed, back after 10 s: the streams, replicated three times, keep serving", async () => {
    let leader = -1;
    expectClean(
      await runContainerFault(t, {
        name: "nats stream leader killed 10 s",
        touches: (topology) => [topology.nats[leader]],
        async inject(topology) {
          leader = await commandStreamLeader(topology);
          await topology.kill(topology.nats[leader]);
          await outage(10_000);
          await topology.start(topology.nats[leader]);
        },
      }),
    );
  });

  it("every NATS node restarted at once", async () => {
    expectClean(
      await runContainerFault(t, {
        name: "all nats nodes restarted",
        touches: (topology) => topology.nats,
        inject: async (topology) => {
          await Promise.all(topology.nats.map((n) => topology.restartNats(n)));
        },
      }),
    );
  });

  it("creates every stream with three replicas", async () => {
    const nc = await t.connectNats();
    try {
      const jsm = await jetstreamManager(nc);
      const names = busNames(t.namespace);
      for (const stream of [names.commandStream, names.eventStream, names.deadLetterStream]) {
        // After the whole cluster's restart above, a stream answers once it has a leader again (20-40 s here), and
        // its peers' view settles after that: once seen with three peers listed beside the leader for a moment.
        const info = await waitFor(
          async () => {
            const found = await jsm.streams.info(stream).catch(() => undefined);
            return found?.cluster?.leader && found.cluster.replicas?.length === 2 ? found : undefined;
          },
          { timeoutMs: 90_000, intervalMs: 500, what: `stream ${stream} to answer from a leader with two other replicas` },
        );
        expect(info.config.num_replicas).toBe(3);
        // Three distinct servers hold it: the leader and two others.
        expect(new Set([info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)]).size).toBe(3);
      }
    } finally {
      await nc.close();
    }
  });
});
