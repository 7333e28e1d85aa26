import { join } from "node:path";
import pg from "pg";
import { jetstreamManager, StorageType } from "@nats-io/jetstream";
import { connectNats } from "@steward/platform";
import { spawnNode, type Child } from "../child";
import { summarize, type Summary } from "../stats";

export interface SkeletonFloor {
  /** The crossings alone. */
  readonly bare: Summary;
  /** With what SPEC adds to them: the bus copies in order, the tool's record in a transaction of its own, a streamed answer. */
  readonly design: Summary;
}

/** Decisions, effects and events as rows of a JSON payload each; the records by call, as tool_results has them by key. */
const TABLES = [
  ...["decisions", "effects", "events"].map(
    (t) =>
      `CREATE TABLE IF NOT EXISTS bench_skeleton_${t} (id bigserial PRIMARY KEY, payload jsonb NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`,
  ),
  "CREATE TABLE IF NOT EXISTS bench_skeleton_records (call_id text PRIMARY KEY, payload jsonb NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())",
].join(";\n");

/** One shape's serial iterations (`bare`, `design`, or parts of it joined by `+`), each role a process of its own (skeleton-server.ts). */
async function iterations(shape: string, databaseUrl: string, modelUrl: string, natsUrl: string, subject: string, samples: number): Promise<Summary> {
  const script = join(__dirname, "skeleton-server.js");
  const started: Child[] = [];
  try {
    const pdp = await spawnNode(script, ["pdp", databaseUrl]);
    started.push(pdp);
    const toolExec = await spawnNode(script, ["toolexec", shape, String(pdp.ready.addr), databaseUrl]);
    started.push(toolExec);
    const runner = await spawnNode(script, ["runner", shape, String(toolExec.ready.addr), databaseUrl, modelUrl, natsUrl, subject, "200", String(samples)], {
      readyMsg: "done",
      timeoutMs: 120_000,
    });
    started.push(runner);
    return summarize(runner.ready.times as number[]);
  } finally {
    for (const child of started.reverse()) await child.stop();
  }
}

/**
 * Serial iterations of each shape in turn (`bare`, `design`, or parts of `design` joined by `+`: `copies`,
 * `record`, `stream`), on a stream of their own for the copies.
 */
export async function measureShapes(
  databaseUrl: string,
  modelUrl: string,
  natsUrl: string,
  namespace: string,
  shapes: readonly string[],
  samples: number,
): Promise<Summary[]> {
  const setup = new pg.Client({ connectionString: databaseUrl, application_name: "steward-bench-skeleton" });
  await setup.connect();
  try {
    await setup.query(TABLES);
  } finally {
    await setup.end();
  }
  const nc = await connectNats(natsUrl, "steward-bench-skeleton");
  const stream = `${namespace.toUpperCase()}_BENCH_SKELETON`;
  const subject = `${namespace}.bench.skeleton`;
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${subject}.>`], storage: StorageType.File, duplicate_window: 120_000_000_000 });
    try {
      const out: Summary[] = [];
      for (const shape of shapes) out.push(await iterations(shape, databaseUrl, modelUrl, natsUrl, subject, samples));
      return out;
    } finally {
      await jsm.streams.delete(stream).catch(() => undefined);
    }
  } finally {
    await nc.close();
  }
}

/**
 * The governed iteration's skeleton: a serial tool iteration cut down to what the design fixes, each role a
 * process with nothing else to do: the model asked over HTTP (the bench's fake model); the answer committed
 * while the call goes held to tool-exec, which asks the PDP at once; the PDP's record committed before it
 * answers; the call released once the answer's commit is back; the tool's effect and its record; the result
 * committed. `bare` has only these crossings; `design` adds what SPEC adds to them (a copy of each event on the
 * bus in order, the tool's record held in a transaction of its own, the answer streamed). No lease, log line,
 * fold, check or metric. Context, not a must: what any implementation of the design pays per iteration here.
 */
export async function measureSkeleton(
  databaseUrl: string,
  modelUrl: string,
  natsUrl: string,
  namespace: string,
  options: { samples: number },
): Promise<SkeletonFloor> {
  const [bare, design] = await measureShapes(databaseUrl, modelUrl, natsUrl, namespace, ["bare", "design"], options.samples);
  return { bare, design };
}
