import { RateLimitedError, UnavailableError } from "@steward/platform";
import { createStreamSlots } from "./stream-slots";

const ana = { tenantId: "acme", userId: "ana" };
const bob = { tenantId: "acme", userId: "bob" };
const gil = { tenantId: "globex", userId: "gil" };

describe("the gateway's event stream slots", () => {
  it("refuses a user past its share, then its tenant past its share (429), while another tenant still opens", () => {
    const slots = createStreamSlots({ perUser: 2, perTenant: 3, max: 100 });
    slots.take(ana);
    slots.take(ana);
    expect(() => slots.take(ana)).toThrow(RateLimitedError);
    slots.take(bob);
    expect(() => slots.take(bob)).toThrow(/your tenant/);
    expect(() => slots.take(gil)).not.toThrow();
    expect(slots.size()).toBe(4);
  });

  it("refuses everyone past the gateway's bound (503), and frees a slot once, however often it is released", () => {
    const slots = createStreamSlots({ perUser: 10, perTenant: 10, max: 2 });
    const release = slots.take(ana);
    slots.take(gil);
    expect(() => slots.take(bob)).toThrow(UnavailableError);
    release();
    release();
    expect(slots.size()).toBe(1);
    slots.take(bob);
    expect(() => slots.take(bob)).toThrow(UnavailableError);
  });

  it("answers null instead of refusing with tryTake, and counts what it holds in the same shares", () => {
    const slots = createStreamSlots({ perUser: 2, perTenant: 10, max: 10 });
    slots.take(ana);
    const held = slots.tryTake(ana);
    expect(held).not.toBeNull();
    expect(slots.tryTake(ana)).toBeNull();
    expect(() => slots.take(ana)).toThrow(RateLimitedError);
    held!();
    expect(slots.tryTake(ana)).not.toBeNull();
  });

  it("keeps a user of one tenant apart from the same user name in another", () => {
    const slots = createStreamSlots({ perUser: 1, perTenant: 10, max: 10 });
    slots.take({ tenantId: "acme", userId: "x" });
    expect(() => slots.take({ tenantId: "globex", userId: "x" })).not.toThrow();
  });
});
