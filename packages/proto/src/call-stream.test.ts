import { credentials, status, type ClientDuplexStream, type ServiceError } from "@grpc/grpc-js";
import {
  bindGrpc,
  CallDroppedError,
  callStreamsOf,
  createGrpcServer,
  type grpc,
  grpcError,
  serveCallStream,
  shutdownGrpc,
  streamedCalls,
  type CallMeta,
} from "@steward/platform";
import {
  PolicyDecisionClient,
  PolicyDecisionService,
  type DecideCall,
  type DecideReply,
  type DecideRequest,
  type DecideResponse,
} from "./gen/steward/v1/policy";

// Calls on a call stream, both ends real: a grpc-js server on loopback with `serveCallStream`, and the
// generated client with `streamedCalls`. The handler is the test's: it answers when the test says so.

const request = (action: string): DecideRequest => ({
  principal: { tenantId: "acme", userId: "alice", roles: [], rolesFromToken: false },
  action,
  resource: { type: "tool", id: "t" },
  context: {},
});
const permitFor = (action: string): DecideResponse => ({ permit: true, code: "", reasons: [action], policyIds: [] });

interface Held {
  readonly request: DecideRequest;
  readonly meta: CallMeta;
  answer(response: DecideResponse): void;
  fail(err: ServiceError): void;
}

function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A word for a held call, given later by the test. */
function release(): { go: Promise<boolean>; say(go: boolean): void } {
  let say!: (go: boolean) => void;
  const go = new Promise<boolean>((r) => (say = r));
  return { go, say };
}

/** Set by a describe whose handler prepares held calls (`preparesHeld`). */
let prepares = false;

describe("calls on a call stream", () => {
  let server: grpc.Server;
  let address: string;
  let held: Held[];
  let streamsOpened: number;
  let arrived: { promise: Promise<void>; resolve(): void; want: number };
  let client: PolicyDecisionClient;
  let opened: Array<ClientDuplexStream<DecideCall, DecideReply>>;

  /** Resolves once `n` calls in all have reached the handler. */
  const untilHeld = (n: number): Promise<void> => {
    const d = deferred();
    arrived = { ...d, want: n };
    if (held.length >= n) d.resolve();
    return d.promise;
  };

  beforeEach(async () => {
    held = [];
    streamsOpened = 0;
    arrived = { ...deferred(), want: Infinity };
    opened = [];
    server = createGrpcServer();
    const each = serveCallStream(
      callStreamsOf(server),
      (req: DecideRequest, meta) =>
        new Promise<DecideResponse>((resolve, reject) => {
          held.push({ request: req, meta, answer: resolve, fail: reject });
          if (held.length >= arrived.want) arrived.resolve();
        }),
      (err) => err as ServiceError,
      { preparesHeld: prepares },
    );
    server.addService(PolicyDecisionService, {
      decide: (_call: unknown, cb: (err: ServiceError) => void) => cb(grpcError(status.UNIMPLEMENTED, "the test's server takes streams only")),
      decideEach: (call: Parameters<typeof each>[0]) => {
        streamsOpened++;
        each(call);
      },
    });
    address = `127.0.0.1:${await bindGrpc(server, "127.0.0.1:0")}`;
    client = new PolicyDecisionClient(address, credentials.createInsecure());
  });

  afterEach(async () => {
    client.close();
    server.forceShutdown();
  });

  const callsOn = () =>
    streamedCalls(
      () => client,
      (c) => {
        const stream = c.decideEach();
        opened.push(stream);
        return stream;
      },
    );

  it("given three calls in flight on one stream, when the server answers them in reverse order, then each caller gets its own answer", async () => {
    const calls = callsOn();
    const answers = ["a", "b", "c"].map((action) => calls.call(request(action), { deadlineMs: 10_000 }));
    await untilHeld(3);
    for (const h of [...held].reverse()) h.answer(permitFor(h.request.action));
    expect((await Promise.all(answers)).map((a) => a.reasons[0])).toEqual(["a", "b", "c"]);
    expect(streamsOpened).toBe(1);
    calls.close();
  });

  it("given a call the server fails with a status, then its caller gets that code and details, and the stream goes on", async () => {
    const calls = callsOn();
    const failing = calls.call(request("bad"), { deadlineMs: 10_000 });
    const fine = calls.call(request("good"), { deadlineMs: 10_000 });
    await untilHeld(2);
    held[0].fail(grpcError(status.INVALID_ARGUMENT, "action is required"));
    held[1].answer(permitFor("good"));
    await expect(failing).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: "action is required" });
    await expect(fine).resolves.toMatchObject({ permit: true });
    expect(streamsOpened).toBe(1);
    calls.close();
  });

  it("given the trace context and deadline of a call, then the handler gets them from the message", async () => {
    const calls = callsOn();
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const answered = calls.call(request("traced"), { deadlineMs: 7000, traceparent });
    await untilHeld(1);
    expect(held[0].meta.traceparent).toBe(traceparent);
    expect(held[0].meta.deadlineMs).toBe(7000);
    held[0].answer(permitFor("traced"));
    await answered;
    calls.close();
  });

  it("given a call nobody answers, when its deadline passes, then its caller gets DEADLINE_EXCEEDED, the handler's signal aborts, and the next call is answered on the same stream", async () => {
    const calls = callsOn();
    const late = calls.call(request("late"), { deadlineMs: 200 });
    await untilHeld(1);
    await expect(late).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
    const aborted = held[0].meta.signal.aborted ? Promise.resolve() : new Promise((r) => held[0].meta.signal.addEventListener("abort", r));
    await aborted;
    held[0].answer(permitFor("late")); // too late: nobody waits for it
    const next = calls.call(request("next"), { deadlineMs: 10_000 });
    await untilHeld(2);
    held[1].answer(permitFor("next"));
    await expect(next).resolves.toMatchObject({ reasons: ["next"] });
    expect(streamsOpened).toBe(1);
    calls.close();
  });

  it("given calls in flight, when the caller's stream is cancelled, then every call still running on it is told its caller is gone", async () => {
    const calls = callsOn();
    const pending = [calls.call(request("x"), { deadlineMs: 10_000 }), calls.call(request("y"), { deadlineMs: 10_000 })];
    await untilHeld(2);
    opened[0].cancel();
    await Promise.all(pending.map((p) => expect(p).rejects.toMatchObject({ code: status.CANCELLED })));
    await Promise.all(held.map((h) => (h.meta.signal.aborted ? undefined : new Promise((r) => h.meta.signal.addEventListener("abort", r)))));
    expect(held.every((h) => h.meta.signal.aborted)).toBe(true);
  });

  it("given a stream that ended, then the next call opens a new one and is answered", async () => {
    const calls = callsOn();
    const first = calls.call(request("first"), { deadlineMs: 10_000 });
    await untilHeld(1);
    opened[0].cancel();
    await expect(first).rejects.toMatchObject({ code: status.CANCELLED });
    const second = calls.call(request("second"), { deadlineMs: 10_000 });
    await untilHeld(2);
    held[1].answer(permitFor("second"));
    await expect(second).resolves.toMatchObject({ reasons: ["second"] });
    expect(streamsOpened).toBe(2);
    calls.close();
  });

  it("given a call in flight, when the server shuts down, then that call is answered, a call sent meanwhile is refused UNAVAILABLE, and the stream ends without being forced", async () => {
    const calls = callsOn();
    const inFlight = calls.call(request("in-flight"), { deadlineMs: 10_000 });
    await untilHeld(1);
    const forced = jest.spyOn(server, "forceShutdown");
    const shutdown = shutdownGrpc(server, 20_000);
    const meanwhile = calls.call(request("meanwhile"), { deadlineMs: 10_000 });
    await expect(meanwhile).rejects.toMatchObject({ code: status.UNAVAILABLE });
    held[0].answer(permitFor("in-flight"));
    await expect(inFlight).resolves.toMatchObject({ reasons: ["in-flight"] });
    await shutdown;
    expect(forced).not.toHaveBeenCalled();
    expect(held).toHaveLength(1); // the refused call never reached the handler
  });

  it("given a closed caller with a call in flight, then that call is still answered and the stream then ends", async () => {
    const calls = callsOn();
    const inFlight = calls.call(request("last"), { deadlineMs: 10_000 });
    await untilHeld(1);
    calls.close();
    await expect(calls.call(request("after"), { deadlineMs: 1000 })).rejects.toMatchObject({ code: status.UNAVAILABLE });
    held[0].answer(permitFor("last"));
    await expect(inFlight).resolves.toMatchObject({ reasons: ["last"] });
    const ended = opened[0].readableEnded ? Promise.resolve() : new Promise((r) => opened[0].once("end", r));
    await ended;
  });
  describe("a call sent held, to a handler that cannot prepare", () => {
    it("given a held call and a plain one after it, then only the plain one is handled until the caller lets the held one go on; then it is handled and answered", async () => {
      const calls = callsOn();
      const word = release();
      const first = calls.call(request("held"), { deadlineMs: 10_000, go: word.go });
      const plain = calls.call(request("plain"), { deadlineMs: 10_000 });
      await untilHeld(1);
      // The stream keeps its order, so the held call reached the server before the plain one was handled.
      expect(held.map((h) => h.request.action)).toEqual(["plain"]);
      held[0].answer(permitFor("plain"));
      await expect(plain).resolves.toMatchObject({ reasons: ["plain"] });
      word.say(true);
      await untilHeld(2);
      expect(held[1].request.action).toBe("held");
      expect(held[1].meta.released).toBeUndefined();
      held[1].answer(permitFor("held"));
      await expect(first).resolves.toMatchObject({ reasons: ["held"] });
      expect(streamsOpened).toBe(1);
      calls.close();
    });

    it("given a held call, when the caller drops it, then its caller gets CANCELLED, the handler never sees it, and the stream goes on", async () => {
      const calls = callsOn();
      const word = release();
      const dropped = calls.call(request("dropped"), { deadlineMs: 10_000, go: word.go });
      word.say(false);
      await expect(dropped).rejects.toMatchObject({ code: status.CANCELLED });
      const next = calls.call(request("next"), { deadlineMs: 10_000 });
      await untilHeld(1);
      expect(held.map((h) => h.request.action)).toEqual(["next"]);
      held[0].answer(permitFor("next"));
      await expect(next).resolves.toMatchObject({ reasons: ["next"] });
      calls.close();
    });
  });

  describe("a call sent held, to a handler that prepares (preparesHeld)", () => {
    beforeAll(() => (prepares = true));
    afterAll(() => (prepares = false));

    it("given a held call, then the handler has it at once with `released` pending, which resolves when the caller lets it go on", async () => {
      const calls = callsOn();
      const word = release();
      const answer = calls.call(request("prepared"), { deadlineMs: 10_000, go: word.go });
      await untilHeld(1);
      const released = held[0].meta.released!;
      let state = "pending";
      released.then(
        () => (state = "released"),
        () => (state = "dropped"),
      );
      // A plain call's round trip after it: whatever the server did with the held call has happened by then.
      const plain = calls.call(request("plain"), { deadlineMs: 10_000 });
      await untilHeld(2);
      held[1].answer(permitFor("plain"));
      await plain;
      expect(state).toBe("pending");
      word.say(true);
      await released;
      expect(held[0].meta.signal.aborted).toBe(false);
      held[0].answer(permitFor("prepared"));
      await expect(answer).resolves.toMatchObject({ reasons: ["prepared"] });
      calls.close();
    });

    it("given a held call, when the caller drops it, then `released` rejects with CallDroppedError and the handler's signal aborts", async () => {
      const calls = callsOn();
      const word = release();
      const answer = calls.call(request("dropped"), { deadlineMs: 10_000, go: word.go });
      await untilHeld(1);
      word.say(false);
      await expect(answer).rejects.toMatchObject({ code: status.CANCELLED });
      await expect(held[0].meta.released).rejects.toBeInstanceOf(CallDroppedError);
      expect(held[0].meta.signal.aborted).toBe(true);
      held[0].fail(grpcError(status.CANCELLED, "dropped")); // as a handler does once its call is dropped
      calls.close();
    });

    it("given a held call, when the caller closes its end of the stream, then the call is dropped: no release can come any more", async () => {
      const calls = callsOn();
      const word = release();
      const answer = calls.call(request("orphan"), { deadlineMs: 10_000, go: word.go });
      await untilHeld(1);
      calls.close();
      await expect(held[0].meta.released).rejects.toBeInstanceOf(CallDroppedError);
      held[0].fail(grpcError(status.CANCELLED, "dropped")); // as a handler does once its call is dropped
      await expect(answer).rejects.toMatchObject({ code: status.CANCELLED });
      word.say(true); // too late: nothing is sent on a closed client
    });

    it("given a plain call, then the handler gets no `released`", async () => {
      const calls = callsOn();
      const answer = calls.call(request("plain"), { deadlineMs: 10_000 });
      await untilHeld(1);
      expect(held[0].meta.released).toBeUndefined();
      held[0].answer(permitFor("plain"));
      await answer;
      calls.close();
    });
  });
});
