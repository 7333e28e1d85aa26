import type { TestPlatform } from "./platform";
import { waitFor } from "./wait-for";

/** Creates a run as `token`'s user and waits (bounded) until it ends; returns the final snapshot. */
export async function runToEnd(platform: TestPlatform, token: string, input: string, timeoutMs = 30_000): Promise<any> {
  const created = await platform.http("POST", "/v1/agents/runs", { token, body: { input } });
  if (created.status !== 201) throw new Error(`POST answered ${created.status}: ${JSON.stringify(created.body)}`);
  return waitFor(
    async () => {
      const r = await platform.http("GET", `/v1/agents/runs/${created.body.id}`, { token });
      return ["succeeded", "failed", "cancelled"].includes(r.body.state) ? r.body : undefined;
    },
    { timeoutMs, what: `run ${created.body.id} to end` },
  );
}

/** The run's events as the API lists them (all pages). */
export async function eventsOf(platform: TestPlatform, token: string, runId: string): Promise<Array<{ seq: number; type: string; data: any }>> {
  const all: Array<{ seq: number; type: string; data: any }> = [];
  let after = 0;
  for (;;) {
    const page = await platform.http("GET", `/v1/agents/runs/${runId}/events?after=${after}&limit=1000`, { token });
    all.push(...page.body.items);
    if (!page.body.has_more) return all;
    after = page.body.next_after;
  }
}
