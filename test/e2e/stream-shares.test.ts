import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { useMcpClients } from "../support/mcp-clients";
import { startTestPlatform, type TestPlatform } from "../support/platform";
import { openEventStream, type SseClient } from "../support/sse";
import { waitFor } from "../support/wait-for";

jest.setTimeout(120_000);

// Open event streams are a pool of the gateway's: each user and each tenant has its share of it
// (GATEWAY_SSE_STREAMS_PER_USER / _PER_TENANT), so one user or tenant cannot hold every stream the gateway can.
describe("the gateway's open event streams: each user's and each tenant's share", () => {
  let platform: TestPlatform;
  const streams: SseClient[] = [];
  const mcp = useMcpClients(() => platform.gatewayUrl);

  beforeAll(async () => {
    platform = await startTestPlatform({ GATEWAY_SSE_STREAMS_PER_USER: "2", GATEWAY_SSE_STREAMS_PER_TENANT: "3" });
    // No runner: the runs stay queued, and their streams stay open.
    await platform.services.runner.stop();
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await mcp.closeAll();
    await platform?.teardown();
  });

  async function queuedRun(token: string): Promise<string> {
    const created = await platform.http("POST", "/v1/agents/runs", { token, body: { input: "How long do I have to ask for a refund?" } });
    expect(created.status).toBe(201);
    return `${platform.gatewayUrl}/v1/agents/runs/${created.body.id}/events`;
  }
  const open = async (url: string, token: string) => {
    const s = await openEventStream(url, token);
    streams.push(s);
    return s;
  };
  const refused = async (url: string, token: string) => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
    return [res.status, ((await res.json()) as { code: number }).code];
  };

  /** Waits until a stream opens again (a slot given back once the gateway sees its holder go), then closes it. */
  const reopened = async (url: string, token: string, what: string) => {
    const res = await waitFor(
      async () => {
        const answer = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
        if (answer.status === 200) return answer;
        await answer.body?.cancel();
        return undefined;
      },
      { what },
    );
    await res.body?.cancel();
  };

  it("refuses a user past its share and a tenant past its share with 429, while another tenant still streams", async () => {
    const ana = await platform.token({ tenant: "acme", user: "ana" });
    const bob = await platform.token({ tenant: "acme", user: "bob" });
    const gil = await platform.token({ tenant: "globex", user: "gil" });
    const anaRun = await queuedRun(ana);
    const first = await open(anaRun, ana);
    await open(anaRun, ana);
    expect(await refused(anaRun, ana)).toEqual([429, 10429]);
    const bobRun = await queuedRun(bob);
    await open(bobRun, bob);
    // acme holds three: its share. bob has room of his own, but not in his tenant's.
    expect(await refused(bobRun, bob)).toEqual([429, 10429]);
    await open(await queuedRun(gil), gil);
    // A stream closed gives its slot back (once the gateway sees the client go).
    first.close();
    await reopened(anaRun, ana, "ana's slot to be given back");
  });

  it("counts an MCP call waiting for its run in the same share: past it, a stream is refused and a wait answers at once", async () => {
    const cy = await platform.token({ tenant: "initech", user: "cy" });
    const { client } = await mcp.connect(cy, "execute");
    // Each run_question reports its run's first events as progress once it follows the run, holding its slot.
    const waits = [0, 1].map(() => {
      const seen: string[] = [];
      const answer = client.callTool({ name: "run_question", arguments: { input: "How long do I have to ask for a refund?" } }, undefined, {
        onprogress: (p) => seen.push(String(p.message)),
      }) as Promise<CallToolResult>;
      return { seen, answer };
    });
    for (const wait of waits) await waitFor(() => (wait.seen.includes("run.queued") ? true : undefined), { what: "a run_question to follow its run" });
    const [runs] = [(await platform.http("GET", "/v1/agents/runs", { token: cy })).body.items as Array<{ id: string }>];
    expect(runs).toHaveLength(2);
    const url = `${platform.gatewayUrl}/v1/agents/runs/${runs[0].id}/events`;
    expect(await refused(url, cy)).toEqual([429, 10429]);
    // A third wait finds the share full: the run as it stands, not a wait of 50 s.
    const now = (await client.callTool({ name: "get_run", arguments: { run_id: runs[0].id, wait_seconds: 50 } })) as CallToolResult;
    expect(now.structuredContent).toMatchObject({ run_id: runs[0].id, state: "queued", settled: false });

    // A wait that ends gives its slot back: cancelling the run settles its run_question.
    expect((await platform.http("POST", `/v1/agents/runs/${runs[0].id}/cancel`, { token: cy })).status).toBe(200);
    const ended = await Promise.race(waits.map((w) => w.answer));
    expect(ended.structuredContent).toMatchObject({ state: "cancelled" });
    await reopened(url, cy, "cy's slot to be given back");
  });
});
