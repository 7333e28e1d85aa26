// The peer: the same 10-iteration task on LangGraph.js, run as its own process (as Steward's runner is).
// A StateGraph agent ⇄ tools loop with PostgresSaver on the same PostgreSQL, the same scripted model over
// HTTP through the same `openai` SDK (streamed, as the runner asks it), and the same tool body
// (test_counter's upsert). After its serial runs it prints {"msg":"warm"}; then, for each `window` line on its
// stdin, it runs one unmeasured round at its concurrency and measures one closed-loop window
// ({"msg":"window", ...}); a `warm-up` line runs a window's length unmeasured ({"msg":"warmed"}); at `end` it
// prints one JSON line {"msg":"result", ...} and exits.
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import pg from "pg";
import OpenAI from "openai";
import { z } from "zod";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import type { RunnableConfig } from "@langchain/core/runnables";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { addCpu, cpuMeter, perUnit } from "../cpu";
import { addActivity, noActivity, pgActivityMeter, perUnitActivity } from "../pg-activity";
import { closedLoop } from "../stats";

interface PeerArgs {
  databaseUrl: string;
  modelUrl: string;
  durability: "sync" | "async";
  serialRuns: number;
  serialWarmupRuns: number;
  concurrency: number;
  windowMs: number;
  iterations: number;
}

// Steward's system prompt core, so that the model sees requests of the same size.
const SYSTEM = [
  "You are Steward, an agent that answers questions and acts through the tools you are given.",
  "Use a tool when the answer depends on the tenant's data; never invent tool results.",
  "When you have what you need, answer in plain text and cite the documents you used by title.",
].join("\n");

function toOpenAi(messages: BaseMessage[]): OpenAI.Chat.Completions.ChatCompletionMessageParam[] {
  return messages.map((m) => {
    const type = m.getType();
    const content = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
    if (type === "system") return { role: "system", content };
    if (type === "human") return { role: "user", content };
    if (type === "tool") return { role: "tool", tool_call_id: (m as unknown as { tool_call_id: string }).tool_call_id, content };
    const calls = (m as AIMessage).tool_calls ?? [];
    return {
      role: "assistant",
      content: content || null,
      ...(calls.length
        ? { tool_calls: calls.map((c) => ({ id: c.id ?? "", type: "function" as const, function: { name: c.name, arguments: JSON.stringify(c.args) } })) }
        : {}),
    };
  });
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]) as PeerArgs;
  const pool = new pg.Pool({ connectionString: args.databaseUrl, max: args.concurrency + 2, application_name: "steward-bench-langgraph" });
  await pool.query(`CREATE TABLE IF NOT EXISTS lg_side_effects (run_id uuid NOT NULL, key text NOT NULL, count integer NOT NULL, PRIMARY KEY (run_id, key))`);
  const saver = new PostgresSaver(pool);
  await saver.setup();
  const model = new OpenAI({ baseURL: args.modelUrl, apiKey: "bench", maxRetries: 0, timeout: 60_000 });

  // test_counter's body, as in tool-exec.
  const counter = tool(
    async ({ key }: { key: string }, config: RunnableConfig) => {
      const runId = String(config.configurable?.thread_id);
      const { rows } = await pool.query<{ count: number }>(
        `INSERT INTO lg_side_effects (run_id, key, count) VALUES ($1, $2, 1)
         ON CONFLICT (run_id, key) DO UPDATE SET count = lg_side_effects.count + 1 RETURNING count`,
        [runId, key],
      );
      return JSON.stringify({ result_code: "ok", result: { key, count: rows[0].count } });
    },
    {
      name: "test_counter",
      description: "Test only: counts how many times it really ran for (run, key), after an optional delay.",
      schema: z.object({ key: z.string().min(1).max(100), delay_ms: z.number().int().min(0).max(5000).optional() }),
    },
  );
  const toolSchemas = [
    {
      type: "function" as const,
      function: {
        name: "test_counter",
        description: counter.description,
        parameters: {
          type: "object",
          properties: { key: { type: "string", minLength: 1, maxLength: 100 }, delay_ms: { type: "integer", minimum: 0, maximum: 5000 } },
          required: ["key"],
          additionalProperties: false,
        },
      },
    },
  ];

  // Wall time (ms) of each model answer, per thread: consecutive answers bound one iteration.
  const answers = new Map<string, number[]>();
  async function agent(state: typeof MessagesAnnotation.State, config: RunnableConfig) {
    // Streamed, as Steward's runner asks the model; tool-call fragments assembled by index.
    const stream = await model.chat.completions.create({
      model: "scripted-bench",
      messages: toOpenAi(state.messages),
      tools: toolSchemas,
      max_tokens: 4096,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    for await (const chunk of stream) {
      for (const choice of chunk.choices ?? []) {
        if (choice.delta?.content) text += choice.delta.content;
        for (const part of choice.delta?.tool_calls ?? []) {
          const call = calls.get(part.index) ?? { id: "", name: "", arguments: "" };
          if (part.id) call.id = part.id;
          if (part.function?.name) call.name += part.function.name;
          if (part.function?.arguments) call.arguments += part.function.arguments;
          calls.set(part.index, call);
        }
      }
    }
    const answer = new AIMessage({
      content: text,
      tool_calls: [...calls.values()].map((c) => ({
        id: c.id,
        name: c.name,
        args: JSON.parse(c.arguments) as Record<string, unknown>,
        type: "tool_call" as const,
      })),
    });
    const tid = String(config.configurable?.thread_id);
    const list = answers.get(tid) ?? [];
    list.push(performance.now());
    answers.set(tid, list);
    return { messages: [answer] };
  }
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", new ToolNode([counter]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => {
      const last = state.messages[state.messages.length - 1] as AIMessage;
      return last.tool_calls && last.tool_calls.length > 0 ? "tools" : END;
    })
    .addEdge("tools", "agent")
    .compile({ checkpointer: saver });

  async function runOnce(): Promise<{ threadId: string; wallMs: number }> {
    const threadId = randomUUID();
    const t0 = performance.now();
    const out = await graph.invoke(
      {
        messages: [
          { role: "system", content: SYSTEM },
          { role: "user", content: `Count for me [iters:${args.iterations}]` },
        ],
      },
      { configurable: { thread_id: threadId }, recursionLimit: 4 * args.iterations + 10, durability: args.durability },
    );
    const wallMs = performance.now() - t0;
    const last = out.messages[out.messages.length - 1];
    if (last.getType() !== "ai" || !String(last.content).startsWith("done")) throw new Error("the LangGraph run did not end with the final answer");
    return { threadId, wallMs };
  }
  const intervalsOf = (threadIds: string[]) => {
    const out: number[] = [];
    for (const t of threadIds) {
      const a = answers.get(t) ?? [];
      for (let i = 1; i < a.length; i++) out.push(a[i] - a[i - 1]);
      answers.delete(t);
    }
    return out;
  };

  // Serial runs: time per iteration.
  for (let i = 0; i < args.serialWarmupRuns; i++) intervalsOf([(await runOnce()).threadId]); // warm-up
  const serialIds: string[] = [];
  const serialWall: number[] = [];
  for (let i = 0; i < args.serialRuns; i++) {
    const r = await runOnce();
    serialIds.push(r.threadId);
    serialWall.push(r.wallMs / args.iterations);
  }
  const serialIntervals = intervalsOf(serialIds);

  // Closed loop at `concurrency`, one window each time the bench asks: it may measure another platform between
  // them. Each window is metered on its own, so the other platform's work is not counted here.
  const rates: number[] = [];
  const loadIds: string[] = [];
  const cpu: Record<string, number> = {};
  let pgActivity = noActivity;
  // A run not measured: its answers' times are dropped (intervalsOf forgets the threads it reads).
  const unmeasured = async () => void intervalsOf([(await runOnce()).threadId]);
  async function window(): Promise<number> {
    // Unmeasured first, as Steward's windows are when they alternate: one round at this concurrency.
    await Promise.all(Array.from({ length: args.concurrency }, unmeasured));
    // LangGraph.js does not use NATS: nats-server's CPU meanwhile is not its own (Steward's platform idles beside it).
    const meter = cpuMeter({ langgraph: process.pid, "bench (model)": process.ppid }, { nats: false });
    const pgMeter = await pgActivityMeter(pool);
    let done = 0;
    const elapsed = await closedLoop(args.concurrency, args.windowMs, async () => {
      loadIds.push((await runOnce()).threadId);
      done++;
    });
    const rate = (done * args.iterations * 1000) / elapsed;
    addCpu(cpu, meter.stop());
    pgActivity = addActivity(pgActivity, await pgMeter.stop());
    rates.push(rate);
    return rate;
  }
  process.stdout.write(`${JSON.stringify({ msg: "warm" })}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    const command = line.trim();
    if (command === "end") break;
    if (command === "window") process.stdout.write(`${JSON.stringify({ msg: "window", rate: await window() })}\n`);
    if (command === "warm-up") {
      await closedLoop(args.concurrency, args.windowMs, unmeasured); // a window's length, unmeasured
      process.stdout.write(`${JSON.stringify({ msg: "warmed" })}\n`);
    }
  }
  process.stdin.destroy();
  const cpuPerIteration = perUnit(cpu, loadIds.length * args.iterations);
  const pgPerIteration = perUnitActivity(pgActivity, loadIds.length * args.iterations);
  const loadIntervals = intervalsOf(loadIds);
  const checked = await pool.query<{ n: number; bad: number }>(
    "SELECT count(*)::int AS n, count(*) FILTER (WHERE count <> 1)::int AS bad FROM lg_side_effects",
  );
  process.stdout.write(
    `${JSON.stringify({
      msg: "result",
      durability: args.durability,
      serialIntervals,
      serialWall,
      loadIntervals,
      rates,
      cpuPerIteration,
      pgPerIteration,
      toolRows: checked.rows[0].n,
      repeatedToolRows: checked.rows[0].bad,
      // The installed packages' own manifests, read when the run is reported.
      versions: {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        langgraph: require("@langchain/langgraph/package.json").version,
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        checkpointPostgres: require("@langchain/langgraph-checkpoint-postgres/package.json").version,
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        core: require("@langchain/core/package.json").version,
      },
    })}\n`,
  );
  await pool.end();
}

main().catch((err) => {
  process.stderr.write(`langgraph peer failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
