import pg from "pg";
import { PayloadLimits, busNames, eventBytes } from "@steward/contract";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { startFakeOpenAi, type ChatRequest, type FakeOpenAi, type Reply } from "../support/fake-openai";
import { readSubject } from "../support/bus";
import { runToEnd } from "../support/runs";

jest.setTimeout(180_000);

const CELL = 1_500_000;

/** The model asks for one 1.5 MB cell, then answers with what it read. */
function script(req: ChatRequest): Reply {
  const tool = req.messages.find((m) => m.role === "tool");
  if (!tool) return { toolCalls: [{ id: "big1", name: "test_big_result", arguments: JSON.stringify({ bytes: CELL }) }] };
  return { text: "The cell was too long to read whole." };
}

describe("an oversized tool result (a 1.5 MB cell) is cut before it becomes an event", () => {
  let platform: TestPlatform;
  let model: FakeOpenAi;
  let pool: pg.Pool;
  let token: string;

  beforeAll(async () => {
    model = await startFakeOpenAi(script);
    platform = await startTestPlatform({ LLM_BASE_URL: model.baseUrl, LLM_API_KEY: "sk-test", LLM_MODEL: "fake" });
    pool = new pg.Pool({ connectionString: platform.databaseUrl, max: 2 });
    token = await platform.token({ tenant: "acme", user: "tess" });
  });

  afterAll(async () => {
    await pool?.end();
    await platform?.teardown();
    await model?.close();
  });

  it("the run goes on; the model, PostgreSQL and the bus each hold the cut result with its note, every event within 256 KiB", async () => {
    const run = await runToEnd(platform, token, "read the big cell");
    expect(run.state).toBe("succeeded");
    expect(run.output.text).toBe("The cell was too long to read whole.");

    // What the runner handed the model is the cut result, with the note and the original size.
    const toolMessage = String(model.requests[1].messages.find((m) => m.role === "tool")!.content);
    expect(Buffer.byteLength(toolMessage)).toBeLessThanOrEqual(PayloadLimits.eventBytes);
    expect(toolMessage).toContain("result_cut");
    expect(toolMessage).toContain("more than the");

    const { rows } = await pool.query<{ type: string; data: any }>("SELECT type, data FROM events WHERE stream_id = $1 ORDER BY version", [run.id]);
    for (const e of rows) expect(eventBytes(e)).toBeLessThanOrEqual(PayloadLimits.eventBytes);
    const stored = rows.find((e) => e.type === "tool_result")!;
    expect(stored.data.result_code).toBe("ok");
    const result = stored.data.result;
    expect(result.columns).toEqual(["id", "body"]);
    expect(result.rows[0][0]).toBe(1);
    expect(result.rows[0][1]).toMatch(new RegExp(`^(0123456789)+[0-9]*… \\[cut: \\d+ of ${CELL} characters\\]$`));
    // The original size is the whole result's: the 1.5 MB cell and its JSON around it.
    expect(result.result_cut.original_bytes).toBeGreaterThan(CELL);
    expect(result.result_cut.note).toContain(`${result.result_cut.original_bytes} bytes`);
    // The cut keeps as much as fits, not a token preview.
    expect(result.rows[0][1].length).toBeGreaterThan(PayloadLimits.toolResultBytes / 2);

    // The bus copy is there (one oversized payload would have been refused by NATS) and carries the same data.
    const nc = await platform.nats();
    const names = busNames(platform.namespace);
    const onBus = await readSubject(nc, names.eventStream, names.runEvent(run.id, "tool_result"));
    expect(onBus).toHaveLength(1);
    expect(onBus[0].json.data).toEqual(stored.data);
    const all = await readSubject(nc, names.eventStream, names.runEvents(run.id));
    expect(all.map((m) => m.json.metadata.seq)).toEqual(rows.map((_, i) => i + 1));
  });
});
