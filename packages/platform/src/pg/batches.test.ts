import { createBatcher, oneStatementOrEachAlone, togetherOrEachAlone, type RunBatch } from "./batches";

/** A batch runner whose batches the test finishes by hand, recording what each one held. */
function heldRunner<T>() {
  const batches: T[][] = [];
  const pending: Array<{ finish(): void; fail(err: unknown): void }> = [];
  const run: RunBatch<T, string> = (items) =>
    new Promise((resolve, reject) => {
      batches.push([...items]);
      pending.push({
        finish: () => resolve(items.map((i) => ({ status: "fulfilled", value: `done ${String(i)}` }))),
        fail: reject,
      });
    });
  /** Resolves when `n` batches have been sent (the batcher starts one after the current turn). */
  const sent = async (n: number) => {
    for (let turns = 0; batches.length < n; turns++) {
      if (turns > 100) throw new Error(`only ${batches.length} of ${n} batches were sent`);
      await Promise.resolve();
    }
  };
  return { run, batches, pending, sent };
}

/** What each promise has settled to so far (undefined while pending). */
function track<T>(promises: Array<Promise<T>>) {
  const states: Array<{ value?: T; error?: unknown } | undefined> = promises.map(() => undefined);
  promises.forEach((p, i) =>
    p.then(
      (value) => void (states[i] = { value }),
      (error: unknown) => void (states[i] = { error }),
    ),
  );
  return states;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("createBatcher: one batch in flight (or maxInFlight), the calls arriving meanwhile grouped into the next", () => {
  it("given calls of one turn, when they are submitted, then they share one batch", async () => {
    const runner = heldRunner<number>();
    const batcher = createBatcher(runner.run);
    const answers = [1, 2, 3].map((i) => batcher.submit(i));
    await runner.sent(1);
    runner.pending[0].finish();
    expect(await Promise.all(answers)).toEqual(["done 1", "done 2", "done 3"]);
    expect(runner.batches).toEqual([[1, 2, 3]]);
  });

  it("given a batch in flight, calls arriving meanwhile wait for it and go together in the next, never in the one sent", async () => {
    const runner = heldRunner<string>();
    const batcher = createBatcher(runner.run);
    const first = track([batcher.submit("a")]);
    await runner.sent(1);
    const later = track(["b", "c", "d"].map((i) => batcher.submit(i)));
    await settle();
    expect(runner.batches).toEqual([["a"]]);
    expect([...first, ...later]).toEqual([undefined, undefined, undefined, undefined]);
    runner.pending[0].finish();
    await runner.sent(2);
    expect(runner.batches).toEqual([["a"], ["b", "c", "d"]]);
    expect(first).toEqual([{ value: "done a" }]);
    // Each caller settles with its own batch, not before.
    expect(later).toEqual([undefined, undefined, undefined]);
    runner.pending[1].finish();
    await settle();
    expect(later).toEqual([{ value: "done b" }, { value: "done c" }, { value: "done d" }]);
  });

  it("bounds a batch at maxBatch: the rest go in the next ones, in order", async () => {
    const runner = heldRunner<number>();
    const batcher = createBatcher(runner.run, { maxBatch: 2 });
    const answers = [1, 2, 3, 4, 5].map((i) => batcher.submit(i));
    for (let n = 1; n <= 3; n++) {
      await runner.sent(n);
      runner.pending[n - 1].finish();
    }
    await Promise.all(answers);
    expect(runner.batches).toEqual([[1, 2], [3, 4], [5]]);
    expect(() => createBatcher(runner.run, { maxBatch: 0 })).toThrow(RangeError);
  });

  it("given maxInFlight 2, a call arriving while one batch runs goes at once in a second; the next calls wait for one of them", async () => {
    const runner = heldRunner<string>();
    const batcher = createBatcher(runner.run, { maxInFlight: 2 });
    const first = track([batcher.submit("a")]);
    await runner.sent(1);
    const second = track([batcher.submit("b"), batcher.submit("c")]);
    await runner.sent(2);
    expect(runner.batches).toEqual([["a"], ["b", "c"]]);
    const third = track([batcher.submit("d"), batcher.submit("e")]);
    await settle();
    expect(runner.batches).toHaveLength(2);
    // The second batch ends first: its callers are answered, and the waiting calls go together in the third.
    runner.pending[1].finish();
    await runner.sent(3);
    expect(runner.batches[2]).toEqual(["d", "e"]);
    await settle();
    expect(second).toEqual([{ value: "done b" }, { value: "done c" }]);
    expect([...first, ...third]).toEqual([undefined, undefined, undefined]);
    runner.pending[0].finish();
    runner.pending[2].finish();
    await settle();
    expect([...first, ...third]).toEqual([{ value: "done a" }, { value: "done d" }, { value: "done e" }]);
  });

  it("given maxInFlight 2, calls of one turn fill one batch before a second one starts", async () => {
    const runner = heldRunner<number>();
    const batcher = createBatcher(runner.run, { maxBatch: 3, maxInFlight: 2 });
    const answers = [1, 2, 3, 4, 5, 6, 7].map((i) => batcher.submit(i));
    await runner.sent(2);
    await settle();
    expect(runner.batches).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    runner.pending[0].finish();
    await runner.sent(3);
    expect(runner.batches[2]).toEqual([7]);
    runner.pending[1].finish();
    runner.pending[2].finish();
    expect(await Promise.all(answers)).toEqual([1, 2, 3, 4, 5, 6, 7].map((i) => `done ${i}`));
  });

  it("refuses a maxInFlight that is not a positive integer", () => {
    expect(() => createBatcher(heldRunner<number>().run, { maxInFlight: 0 })).toThrow(RangeError);
  });

  it("a failed batch fails every call in it, and the next batch still runs", async () => {
    const runner = heldRunner<string>();
    const batcher = createBatcher(runner.run);
    const failed = track(["a", "b"].map((i) => batcher.submit(i)));
    await runner.sent(1);
    const next = batcher.submit("c");
    const lost = new Error("connection lost");
    runner.pending[0].fail(lost);
    await runner.sent(2);
    await settle();
    expect(failed).toEqual([{ error: lost }, { error: lost }]);
    runner.pending[1].finish();
    await expect(next).resolves.toBe("done c");
  });

  it("settles each call with its own outcome when the runner answers one per item", async () => {
    const batcher = createBatcher<number, number>(async (items) =>
      items.map((i) => (i % 2 ? { status: "fulfilled", value: i * 10 } : { status: "rejected", reason: new Error(`no ${i}`) })),
    );
    const states = track([1, 2, 3].map((i) => batcher.submit(i)));
    await settle();
    expect(states.map((s) => s?.value ?? (s?.error as Error).message)).toEqual([10, "no 2", 30]);
  });
});

describe("oneStatementOrEachAlone", () => {
  const refused = Object.assign(new Error("invalid byte sequence"), { code: "22021" });

  it("runs the batch as one statement when it succeeds", async () => {
    const calls: string[][] = [];
    const outcomes = await oneStatementOrEachAlone(["a", "b"], async (items) => {
      calls.push([...items]);
      return items.map((i) => i.toUpperCase());
    });
    expect(calls).toEqual([["a", "b"]]);
    expect(outcomes).toEqual([
      { status: "fulfilled", value: "A" },
      { status: "fulfilled", value: "B" },
    ]);
  });

  it("given data PostgreSQL refuses, runs each entry alone so only the bad one fails", async () => {
    const calls: string[][] = [];
    const outcomes = await oneStatementOrEachAlone(["a", "bad", "c"], async (items) => {
      calls.push([...items]);
      if (items.includes("bad")) throw refused;
      return items.map((i) => i.toUpperCase());
    });
    expect(calls).toEqual([["a", "bad", "c"], ["a"], ["bad"], ["c"]]);
    expect(outcomes).toEqual([
      { status: "fulfilled", value: "A" },
      { status: "rejected", reason: refused },
      { status: "fulfilled", value: "C" },
    ]);
  });

  it("given any other failure, fails the whole batch without retrying", async () => {
    const down = Object.assign(new Error("terminating connection"), { code: "57P01" });
    let calls = 0;
    await expect(
      oneStatementOrEachAlone(["a", "b"], async () => {
        calls += 1;
        throw down;
      }),
    ).rejects.toBe(down);
    expect(calls).toBe(1);
  });
});

describe("togetherOrEachAlone", () => {
  const refused = Object.assign(new Error("duplicate key value"), { code: "23505" });
  const alone = (calls: string[]) => async (item: string) => {
    calls.push(item);
    if (item === "bad") throw refused;
    return item.toUpperCase();
  };

  it("answers each entry as the statement settled it, a rejection of one entry left to that entry", async () => {
    const moved = new Error("b moved");
    const calls: string[] = [];
    const outcomes = await togetherOrEachAlone(["a", "b"], alone(calls), async (items) =>
      items.map((i): PromiseSettledResult<string> => (i === "b" ? { status: "rejected", reason: moved } : { status: "fulfilled", value: i })),
    );
    expect(calls).toEqual([]);
    expect(outcomes).toEqual([
      { status: "fulfilled", value: "a" },
      { status: "rejected", reason: moved },
    ]);
  });

  it("given no statement for the batch, or data PostgreSQL refuses, writes each entry alone so only the bad one fails", async () => {
    for (const together of [undefined, async () => Promise.reject(refused)]) {
      const calls: string[] = [];
      const outcomes = await togetherOrEachAlone(["a", "bad", "c"], alone(calls), together);
      expect(calls).toEqual(["a", "bad", "c"]);
      expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    }
  });
});
