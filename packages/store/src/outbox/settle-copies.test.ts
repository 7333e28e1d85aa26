import type { PublishFailure } from "./publish-failure";
import type { ClaimedRow } from "./run-order";
import { settleCopies } from "./settle-copies";

const policy = { maxAttempts: 3, retryBaseMs: 1000, retryMaxMs: 30_000 };

/** The copy of run `run`'s event at `version`, with the refusals counted for it so far. */
const copy = (run: string, version: number, attempts = 0): ClaimedRow => ({
  id: `${run}-${version}`,
  run_id: run,
  version,
  subject: `ev.${run}.${version}`,
  msg_id: `${run}-${version}`,
  payload: "{}",
  headers: {},
  attempts,
});
const ok = (row: ClaimedRow) => ({ row, failure: null });
const failed = (row: ClaimedRow, failure: PublishFailure) => ({ row, failure });
const refusal: PublishFailure = { kind: "refused", reason: "message size exceeds maximum allowed" };
const unanswered: PublishFailure = { kind: "outage", noResponders: true };
const away: PublishFailure = { kind: "outage", noResponders: false };

const runsOf = (s: ReturnType<typeof settleCopies>) => [...s.runs].sort((x, y) => x.runId.localeCompare(y.runId));

describe("settleCopies: what the copies a relay tried make of their runs", () => {
  it("given every copy published, then each run is on the bus up to its last one, nothing to retry", () => {
    const settled = settleCopies([ok(copy("a", 1)), ok(copy("b", 7)), ok(copy("a", 2)), ok(copy("a", 3))], policy);
    expect(runsOf(settled)).toEqual([
      { runId: "a", publishedVersion: 3, attempts: 0, retryInMs: null },
      { runId: "b", publishedVersion: 7, attempts: 0, retryInMs: null },
    ]);
    expect(settled).toMatchObject({ setAside: [], retried: [], outage: false });
  });

  it("given a copy refused after its run's earlier ones went, then the run is on the bus up to them and the refusal is counted with a backoff", () => {
    const settled = settleCopies([ok(copy("a", 1)), ok(copy("b", 1)), failed(copy("a", 2), refusal)], policy);
    expect(runsOf(settled)).toEqual([
      { runId: "a", publishedVersion: 1, attempts: 1, retryInMs: 1000 },
      { runId: "b", publishedVersion: 1, attempts: 0, retryInMs: null },
    ]);
    expect(settled.retried).toEqual([
      { kind: "refused", id: 2, runId: "a", subject: "ev.a.2", attempts: 1, reason: refusal.reason, setAside: false, retryInMs: 1000 },
    ]);
    expect(settled).toMatchObject({ setAside: [], outage: false });
  });

  it("given the run's first unpublished copy refused again, then the run stays before it, counted once more, the backoff doubled", () => {
    const settled = settleCopies([failed(copy("a", 5, 1), refusal)], policy);
    expect(settled.runs).toEqual([{ runId: "a", publishedVersion: 4, attempts: 2, retryInMs: 2000 }]);
    expect(settled.setAside).toEqual([]);
  });

  it("given a copy refused at its last attempt, then it is set aside with its reason and the run moves past it, its count reset", () => {
    const poison = copy("a", 3, 2);
    const settled = settleCopies([failed(poison, refusal)], policy);
    expect(settled.setAside).toEqual([{ row: poison, attempts: 3, reason: refusal.reason }]);
    expect(settled.runs).toEqual([{ runId: "a", publishedVersion: 3, attempts: 0, retryInMs: null }]);
    expect(settled.retried).toEqual([expect.objectContaining({ kind: "refused", id: 3, runId: "a", attempts: 3, setAside: true })]);
  });

  it("given no stream answering for a copy, then the run waits a pause before it, its count unchanged, never set aside", () => {
    const settled = settleCopies([ok(copy("a", 1)), failed(copy("a", 2, 2), unanswered)], policy);
    expect(settled.runs).toEqual([{ runId: "a", publishedVersion: 1, attempts: 2, retryInMs: 1000 }]);
    expect(settled.setAside).toEqual([]);
    expect(settled.retried).toEqual([expect.objectContaining({ kind: "unanswered", id: 2, attempts: 2, setAside: false })]);
    expect(settled.outage).toBe(false);
  });

  it("given the bus away, then the batch is an outage: what went before is recorded, the run that met it is left as it was", () => {
    const settled = settleCopies(
      [ok(copy("a", 1)), ok(copy("b", 4)), failed(copy("a", 2), away), failed(copy("b", 5), away), failed(copy("c", 1, 2), away)],
      policy,
    );
    expect(settled.outage).toBe(true);
    expect(runsOf(settled)).toEqual([
      { runId: "a", publishedVersion: 1, attempts: 0, retryInMs: null },
      { runId: "b", publishedVersion: 4, attempts: 0, retryInMs: null },
    ]);
    expect(settled).toMatchObject({ setAside: [], retried: [] });
  });

  it("given nothing tried, then nothing is settled", () => {
    expect(settleCopies([], policy)).toEqual({ runs: [], setAside: [], retried: [], outage: false });
  });
});
