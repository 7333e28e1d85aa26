import type pg from "pg";

// The person behind the container suite's runs: save_note asks them to approve each call, and they approve every
// note their runs ask for, through the gateway's REST API as the console does (the call's fingerprint sent with the
// decision), until told to stop. It works while faults come and go: a poll or a request that fails is tried again
// at the next tick; requests are bounded, so a stalled server never holds it.

const TICK_MS = 100;
const REQUEST_TIMEOUT_MS = 10_000;

export interface Approver {
  /** Decisions the gateway accepted so far. */
  approved(): number;
  stop(): Promise<void>;
}

interface Waiting {
  id: string;
  fingerprint: string;
}

/** The runs of `tenant` that wait for the approval of a save_note call, with the call's fingerprint. */
async function waitingNotes(pool: pg.Pool, tenant: string): Promise<Waiting[]> {
  const { rows } = await pool.query<Waiting>(
    `SELECT r.id::text AS id, c.data->>'fingerprint' AS fingerprint
       FROM runs r
       CROSS JOIN LATERAL (SELECT data FROM events e WHERE e.stream_id = r.id AND e.type = 'confirmation_required'
                            ORDER BY e.version DESC LIMIT 1) c
      WHERE r.tenant_id = $1 AND r.state = 'awaiting_confirmation' AND c.data->>'tool_name' = 'save_note'`,
    [tenant],
  );
  return rows;
}

export function startApprover(options: { pool: pg.Pool; gatewayUrl: string; tenant: string; token: () => Promise<string> }): Approver {
  let stopped = false;
  let approved = 0;
  const decided = new Set<string>();
  const approve = async ({ id, fingerprint }: Waiting): Promise<void> => {
    const res = await fetch(`${options.gatewayUrl}/v1/agents/runs/${id}/confirmation`, {
      method: "POST",
      headers: { authorization: `Bearer ${await options.token()}`, "content-type": "application/json" },
      body: JSON.stringify({ decision: "approve", fingerprint }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    await res.arrayBuffer();
    // 409: the run waits for another call by now (or this one was decided): nothing to do for this one.
    if (res.ok || res.status === 409) decided.add(`${id}/${fingerprint}`);
    if (res.ok) approved++;
  };
  const loop = (async () => {
    while (!stopped) {
      const waiting = await waitingNotes(options.pool, options.tenant).catch(() => [] as Waiting[]);
      await Promise.all(waiting.filter((w) => !decided.has(`${w.id}/${w.fingerprint}`)).map((w) => approve(w).catch(() => undefined)));
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
  })();
  return {
    approved: () => approved,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
