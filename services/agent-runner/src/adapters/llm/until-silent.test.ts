import { untilSilent } from "./until-silent";

/** Yields `count` items, each after `gapMs`, then stays silent until `release` is called. */
function source(count: number, gapMs: number) {
  let release = () => undefined as void;
  const silent = new Promise<void>((resolve) => (release = resolve));
  async function* items() {
    for (let i = 0; i < count; i++) {
      await new Promise((resolve) => setTimeout(resolve, gapMs));
      yield i;
    }
    await silent;
  }
  return { items: items(), release: () => release() };
}

describe("untilSilent", () => {
  it("passes items through and does not call onSilence while they keep coming", async () => {
    const onSilence = jest.fn();
    const { items, release } = source(5, 20);
    const seen: number[] = [];
    for await (const item of untilSilent(items, 1000, onSilence)) {
      seen.push(item);
      if (item === 4) release();
    }
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(onSilence).not.toHaveBeenCalled();
  });

  it("calls onSilence once when no item comes for the bound", async () => {
    const { items, release } = source(1, 0);
    const silenced = new Promise<void>((resolve) => {
      void (async () => {
        for await (const _ of untilSilent(items, 50, () => {
          resolve();
          release();
        }));
      })();
    });
    await expect(silenced).resolves.toBeUndefined();
  });
});
