import { settleBatch, type AttemptedRow } from "./settle-batch";
import { classifyPublishError } from "./publish-failure";

const policy = { maxAttempts: 3, retryBaseMs: 1000, retryMaxMs: 30_000 };
const ok = (id: number): AttemptedRow => ({ id, subject: `s.${id}`, attempts: 0, failure: null });
const refused = (id: number, attempts = 0): AttemptedRow => ({ id, subject: `s.${id}`, attempts, failure: { kind: "refused", reason: "too large" } });
const outage = (id: number, noResponders = false): AttemptedRow => ({ id, subject: `s.${id}`, attempts: 0, failure: { kind: "outage", noResponders } });

describe("settleBatch: what each tried outbox row becomes", () => {
  it("given every row published, then all are marked", () => {
    expect(settleBatch([ok(1), ok(2)], policy)).toEqual({ published: [1, 2], retried: [], outage: false });
  });

  it("given a refused row, then it is counted with a backoff and the rows published beside it are marked", () => {
    expect(settleBatch([ok(1), refused(2), ok(3)], policy)).toEqual({
      published: [1, 3],
      retried: [{ kind: "refused", id: 2, subject: "s.2", attempts: 1, reason: "too large", setAside: false, retryInMs: 1000 }],
      outage: false,
    });
  });

  it("given a refused row at its last attempt, then it is set aside", () => {
    const { retried } = settleBatch([refused(7, 2)], policy);
    expect(retried).toEqual([{ kind: "refused", id: 7, subject: "s.7", attempts: 3, reason: "too large", setAside: true, retryInMs: 4000 }]);
  });

  it("given the bus away for a row, then it is left as it was, uncounted, and the batch is an outage", () => {
    expect(settleBatch([ok(1), outage(2), refused(4)], policy)).toEqual({
      published: [1],
      retried: [expect.objectContaining({ id: 4, kind: "refused" })],
      outage: true,
    });
  });

  it("given no stream answering for a row, then it waits the base pause, uncounted, never set aside, with its reason", () => {
    // A stream between two leaders answers nobody for a moment: the message is fine, and must not run out of attempts.
    const settled = settleBatch([outage(1, true), ok(2), { ...outage(3, true), attempts: 2 }], policy);
    expect(settled.published).toEqual([2]);
    expect(settled.outage).toBe(false);
    expect(settled.retried).toEqual([
      { kind: "unanswered", id: 1, subject: "s.1", attempts: 0, reason: "no JetStream stream answered for subject s.1", setAside: false, retryInMs: 1000 },
      { kind: "unanswered", id: 3, subject: "s.3", attempts: 2, reason: "no JetStream stream answered for subject s.3", setAside: false, retryInMs: 1000 },
    ]);
  });

  it("caps the backoff", () => {
    expect(settleBatch([refused(1, 9)], { ...policy, maxAttempts: 20 }).retried[0].retryInMs).toBe(30_000);
  });
});

describe("classifyPublishError", () => {
  const named = (name: string, extra: object = {}) => Object.assign(new Error("m"), { name }, extra);

  it("refuses what is about the message: a client-side refusal or a JetStream 4xx", () => {
    expect(classifyPublishError(named("InvalidArgumentError"))).toMatchObject({ kind: "refused" });
    expect(classifyPublishError(named("InvalidSubjectError"))).toMatchObject({ kind: "refused" });
    expect(classifyPublishError(named("JetStreamApiError", { status: 400, code: 10054 }))).toMatchObject({
      kind: "refused",
      reason: "JetStream refused it (400, err_code 10054): m",
    });
  });

  it("calls everything else an outage: timeouts, closed connections, JetStream 5xx, unknown errors", () => {
    expect(classifyPublishError(named("TimeoutError"))).toEqual({ kind: "outage", noResponders: false });
    expect(classifyPublishError(named("ClosedConnectionError"))).toEqual({ kind: "outage", noResponders: false });
    expect(classifyPublishError(named("JetStreamApiError", { status: 503, code: 10008 }))).toEqual({ kind: "outage", noResponders: false });
    expect(classifyPublishError(new Error("?"))).toEqual({ kind: "outage", noResponders: false });
    expect(classifyPublishError(named("NoStreamError"))).toEqual({ kind: "outage", noResponders: true });
  });
});
