import { startTestPlatform, type TestPlatform } from "../support/platform";
import { openEventStream, type SseClient } from "../support/sse";
import { waitFor } from "../support/wait-for";

jest.setTimeout(120_000);

// Open event streams are a pool of the gateway's: each user and each tenant has its share of it
// (GATEWAY_SSE_STREAMS_PER_USER / _PER_TENANT), so one user or tenant cannot hold every stream the gateway can.
describe("the gateway's open event streams: each user's and each tenant's share", () => {
  let platform: TestPlatform;
  const streams: SseClient[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ GATEWAY_SSE_STREAMS_PER_USER: "2", GATEWAY_SSE_STREAMS_PER_TENANT: "3" });
    // No runner: the runs stay queued, and their streams stay open.
    await platform.services.runner.stop();
  });
  afterAll(async () => {
    for (const s of streams) s.close();
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
    const again = await waitFor(
      async () => {
        const res = await fetch(anaRun, { headers: { authorization: `Bearer ${ana}`, accept: "text/event-stream" } });
        if (res.status === 200) return res;
        await res.body?.cancel();
        return undefined;
      },
      { what: "ana's slot to be given back" },
    );
    await again.body?.cancel();
  });
});
