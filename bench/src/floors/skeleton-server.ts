// The governed iteration's skeleton (skeleton-floor.ts), one role per process, each doing only what the design
// fixes for a tool step and nothing of Steward's own work. `shape` is `bare` (the crossings alone), `design`
// (with all SPEC adds to them: `copies`, a copy of every event on the bus, each once the one before it is
// acknowledged; `record`, the tool's record held in a transaction of its own; `stream`, the model's answer
// streamed), or some of those parts joined by `+` (to see what each costs).
//   `pdp <db>`                        answers a decision once its record is committed (one INSERT);
//   `toolexec <shape> <pdp> <db>`     takes a held call and asks the PDP at once; once released and permitted,
//                                     writes the tool's effect and its record, then answers;
//   `runner <shape> <toolexec> <db> <model> <nats> <subject> <warm-up> <samples>`
//                                     asks the model over HTTP, commits the answer while its call goes held to
//                                     tool-exec, releases it once committed, commits the result; prints the times.
import { request, Agent } from "node:http";
import pg from "pg";
import { jetstream } from "@nats-io/jetstream";
import { bindGrpc, callStreamsOf, connectNats, createGrpcServer, grpc, serveCallStream, type CallMeta } from "@steward/platform";
import {
  PolicyDecisionService,
  ToolExecService,
  createPolicyDecisionApi,
  createToolExecApi,
  type DecideRequest,
  type DecideResponse,
  type InvokeRequest,
  type InvokeResponse,
  type PolicyDecisionServer,
  type ToolExecServer,
} from "@steward/proto";

// About the size of a run event's data.
const EVENT = JSON.stringify({ step_no: 3, call_id: "call_3", tool_name: "test_counter", arguments: '{"key":"k3"}', note: "x".repeat(200) });
const RESULT = '{"result":1,"evidence":[]}';

function connect(url: string, name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: `steward-bench-skeleton-${name}` });
  return client.connect().then(() => client);
}

const streamOnly = (_call: unknown, callback: (err: grpc.ServiceError) => void) =>
  callback(
    Object.assign(new Error("the skeleton answers on its call stream only"), { code: grpc.status.UNIMPLEMENTED, details: "", metadata: new grpc.Metadata() }),
  );

function servePdp(db: pg.Client): grpc.Server {
  const decide = async (req: DecideRequest): Promise<DecideResponse> => {
    await db.query("INSERT INTO bench_skeleton_decisions (payload) VALUES ($1)", [JSON.stringify(req.context)]);
    return { permit: true, code: "", reasons: [], policyIds: ["skeleton"] };
  };
  const server = createGrpcServer();
  const impl: PolicyDecisionServer = { decide: streamOnly, decideEach: serveCallStream(callStreamsOf(server), decide, (err) => err as grpc.ServiceError) };
  server.addService(PolicyDecisionService, impl);
  return server;
}

/**
 * `bare`: the effect and its record in one statement after the release. `design`: as tool-exec holds a write's
 * record, BEGIN, the lock and the lookup in one query as the call arrives; after the release the tool's statement,
 * then the record with COMMIT in one query.
 */
function serveToolExec(parts: ReadonlySet<string>, pdpAddr: string, db: pg.Client): grpc.Server {
  const pdp = createPolicyDecisionApi(pdpAddr);
  const recordOpened = async (callId: string): Promise<void> => {
    await db.query(
      `BEGIN; SELECT pg_advisory_xact_lock(hashtext(${db.escapeLiteral(callId)})); SELECT payload FROM bench_skeleton_records WHERE call_id = ${db.escapeLiteral(callId)}`,
    );
  };
  const invoke = async (req: InvokeRequest, meta: CallMeta): Promise<InvokeResponse> => {
    const decision = pdp.decide(
      {
        principal: { tenantId: req.tenantId, userId: req.userId, roles: [], rolesFromToken: false },
        action: "tool.invoke",
        resource: { type: "tool", id: req.toolName },
        context: { call_id: req.callId },
      },
      { deadlineMs: 5000 },
    );
    const opened = parts.has("record") ? recordOpened(req.callId) : Promise.resolve();
    const [verdict] = await Promise.all([decision, meta.released, opened]);
    if (parts.has("record")) {
      await db.query("INSERT INTO bench_skeleton_effects (payload) VALUES ($1)", [req.argumentsJson]);
      await db.query(`INSERT INTO bench_skeleton_records (call_id, payload) VALUES (${db.escapeLiteral(req.callId)}, ${db.escapeLiteral(RESULT)}); COMMIT`);
    } else {
      await db.query(
        "WITH effect AS (INSERT INTO bench_skeleton_effects (payload) VALUES ($1)) INSERT INTO bench_skeleton_records (call_id, payload) VALUES ($2, $3)",
        [req.argumentsJson, req.callId, RESULT],
      );
    }
    return {
      fingerprint: "",
      decision: { permit: verdict.permit, code: "", reasons: [], policyIds: verdict.policyIds },
      resultCode: "ok",
      resultJson: RESULT,
      replayed: false,
      nextState: "",
      decisionMs: 0,
      toolMs: 0,
    };
  };
  const server = createGrpcServer();
  const impl: ToolExecServer = {
    listTools: streamOnly,
    invoke: streamOnly,
    invokeEach: serveCallStream(callStreamsOf(server), invoke, (err) => err as grpc.ServiceError, { preparesHeld: true }),
  };
  server.addService(ToolExecService, impl);
  return server;
}

/** One POST to the model, read to its end (a streamed answer's events as they come). */
function askModel(agent: Agent, url: URL, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      res.on("data", () => undefined);
      res.on("end", () => resolve());
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

interface RunnerArgs {
  readonly parts: ReadonlySet<string>;
  readonly toolExecAddr: string;
  readonly db: pg.Client;
  readonly modelUrl: string;
  readonly natsUrl: string;
  readonly subject: string;
  readonly warmUp: number;
  readonly samples: number;
}

async function runIterations(a: RunnerArgs): Promise<number[]> {
  const toolExec = createToolExecApi(a.toolExecAddr);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(`${a.modelUrl.replace(/\/+$/, "")}/chat/completions`);
  const question = JSON.stringify({
    model: "skeleton",
    stream: a.parts.has("stream"),
    messages: [{ role: "user", content: "[iters:1000000] skeleton" }],
    tools: [{ type: "function", function: { name: "test_counter" } }],
  });
  const nc = a.parts.has("copies") ? await connectNats(a.natsUrl, "steward-bench-skeleton") : null;
  const js = nc ? jetstream(nc) : null;
  // A copy of each committed event, each sent once the one before it is acknowledged (the bus order).
  let copies: Promise<unknown> = Promise.resolve();
  let copied = 0;
  const copy = (events: number) => {
    for (let k = 0; k < events && js; k++) copies = copies.then(() => js.publish(`${a.subject}.${copied}`, EVENT, { msgID: `skeleton-${copied++}` }));
  };
  const times: number[] = [];
  try {
    for (let i = 0; i < a.warmUp + a.samples; i++) {
      const t0 = performance.now();
      await askModel(agent, url, question);
      let release!: (go: boolean) => void;
      const go = new Promise<boolean>((resolve) => (release = resolve));
      const call: InvokeRequest = {
        runId: "skeleton",
        tenantId: "bench",
        userId: "u1",
        stepNo: i,
        callId: `call_${process.pid}_${i}`,
        toolName: "test_counter",
        argumentsJson: '{"key":"k"}',
        elevationSessionId: "",
      };
      const answer = toolExec.invoke(call, { deadlineMs: 5000, go });
      const committed = a.db.query("INSERT INTO bench_skeleton_events (payload) VALUES ($1)", [EVENT]);
      committed.then(
        () => release(true),
        () => release(false),
      );
      await committed;
      copy(2); // the answer and its tool call
      await answer;
      await a.db.query("INSERT INTO bench_skeleton_events (payload) VALUES ($1)", [EVENT]);
      copy(2); // the decision and the result
      if (i >= a.warmUp) times.push(performance.now() - t0);
    }
    await copies;
    return times;
  } finally {
    toolExec.close();
    agent.destroy();
    await nc?.close();
  }
}

/** What of SPEC's additions a shape has. */
function partsOf(shape: string): ReadonlySet<string> {
  if (shape === "bare") return new Set();
  if (shape === "design") return new Set(["copies", "record", "stream"]);
  return new Set(shape.split("+"));
}

async function main(): Promise<void> {
  const [role, ...args] = process.argv.slice(2);
  if (role === "runner") {
    const [shape, toolExecAddr, dbUrl, modelUrl, natsUrl, subject, warmUp, samples] = args;
    const db = await connect(dbUrl, role);
    const times = await runIterations({
      parts: partsOf(shape),
      toolExecAddr,
      db,
      modelUrl,
      natsUrl,
      subject,
      warmUp: Number(warmUp),
      samples: Number(samples),
    });
    await db.end();
    process.stdout.write(`${JSON.stringify({ msg: "done", times })}\n`);
    return;
  }
  const db = await connect(role === "pdp" ? args[0] : args[2], role);
  const server = role === "pdp" ? servePdp(db) : serveToolExec(partsOf(args[0]), args[1], db);
  const port = await bindGrpc(server, "127.0.0.1:0");
  process.stdout.write(`${JSON.stringify({ msg: "listening", addr: `127.0.0.1:${port}` })}\n`);
  const stop = () => {
    server.tryShutdown(() => void db.end().finally(() => process.exit(0)));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err) => {
  process.stderr.write(`skeleton ${process.argv[2]} failed: ${String(err)}\n`);
  process.exit(1);
});
