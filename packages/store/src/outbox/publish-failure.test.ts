import { randomBytes } from "node:crypto";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { createStreamPublisher } from "@steward/platform";
import { natsUrl } from "../../../../test/support/databases";
import { busAway, classifyPublishError } from "./publish-failure";

jest.setTimeout(30_000);

/** The relay's classification of the rejections a real publish gives (settle-batch.test.ts covers it by name). */
describe("classifyPublishError on real rejections (NATS with JetStream)", () => {
  const tag = randomBytes(4).toString("hex");
  const subject = (s: string) => `pf${tag}.${s}`;
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  beforeAll(async () => {
    nc = await connect({ servers: new URL(natsUrl).host });
    jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: `PF_${tag}`, subjects: [subject("small.>")], max_msg_size: 64 });
  });

  afterAll(async () => {
    await jsm?.streams.delete(`PF_${tag}`).catch(() => undefined);
    await nc?.close();
  });

  const rejection = (p: Promise<unknown>) =>
    p.then(
      () => new Error("it was acknowledged"),
      (e: unknown) => e,
    );

  it("no stream on the subject: an outage with no responders, not the bus away", async () => {
    const failure = classifyPublishError(
      await rejection(createStreamPublisher(nc).publish({ subject: subject("nowhere"), payload: "{}", msgId: "1", headers: {} })),
    );
    expect(failure).toEqual({ kind: "outage", noResponders: true });
    expect(busAway(failure)).toBe(false);
  });

  it("over the stream's size limit, or over the server's payload maximum: refused, with a reason", async () => {
    const bus = createStreamPublisher(nc);
    const tooBig = classifyPublishError(await rejection(bus.publish({ subject: subject("small.x"), payload: "x".repeat(500), msgId: "2", headers: {} })));
    expect(tooBig).toMatchObject({ kind: "refused", reason: expect.stringContaining("JetStream refused it (400") });
    const overMax = classifyPublishError(
      await rejection(bus.publish({ subject: subject("small.y"), payload: "x".repeat(nc.info!.max_payload + 1), msgId: "3", headers: {} })),
    );
    expect(overMax).toMatchObject({ kind: "refused", reason: expect.stringContaining("the NATS client refused it") });
  });

  it("no acknowledgement in time, or the connection closed: the bus away", async () => {
    const silent = nc.subscribe(subject("silent"));
    await nc.flush();
    try {
      const late = classifyPublishError(
        await rejection(createStreamPublisher(nc, { timeoutMs: 100 }).publish({ subject: subject("silent"), payload: "{}", msgId: "4", headers: {} })),
      );
      expect(busAway(late)).toBe(true);
      const own = await connect({ servers: new URL(natsUrl).host });
      const pending = rejection(createStreamPublisher(own).publish({ subject: subject("silent"), payload: "{}", msgId: "5", headers: {} }));
      await own.flush();
      await own.close();
      expect(busAway(classifyPublishError(await pending))).toBe(true);
    } finally {
      silent.unsubscribe();
    }
  });
});
