/** Groups concurrent calls into batches, so that many callers share one statement (and one commit). */
export interface Batcher<In, Out> {
  /** Resolves when the batch holding `item` has run; rejects when that batch (or this item in it) failed. */
  submit(item: In): Promise<Out>;
}

export interface BatcherOptions {
  /** Most items in one batch; the rest wait for the next. Default 100. */
  readonly maxBatch?: number;
  /**
   * Most batches in flight at once. Default 1. With more, a batch sent while another runs uses another connection
   * (and, on the server, another core); items are still never added to a batch already sent.
   */
  readonly maxInFlight?: number;
}

/** Runs one batch: one settled outcome per item, in order. Throwing fails every item of the batch. */
export type RunBatch<In, Out> = (items: readonly In[]) => Promise<ReadonlyArray<PromiseSettledResult<Out>>>;

interface Waiter<In, Out> {
  readonly item: In;
  resolve(value: Out): void;
  reject(reason: unknown): void;
}

/**
 * One batch in flight at a time (or `maxInFlight`). An item submitted while the batches in flight run waits for one
 * of them and goes in the next one, with everything submitted meanwhile (up to `maxBatch`): a quiet caller waits
 * for no timer, a busy moment costs one statement per round trip instead of one per call. An item never joins a
 * batch already sent, so whatever a batch reads or writes happens after each of its items was submitted.
 */
export function createBatcher<In, Out>(run: RunBatch<In, Out>, options: BatcherOptions = {}): Batcher<In, Out> {
  const maxBatch = options.maxBatch ?? 100;
  const maxInFlight = options.maxInFlight ?? 1;
  if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a positive integer, not ${maxBatch}`);
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw new RangeError(`maxInFlight must be a positive integer, not ${maxInFlight}`);
  const waiting: Waiter<In, Out>[] = [];
  /** Drains alive (each sends one batch at a time while items wait), and those of them yet to take their first. */
  let running = 0;
  let starting = 0;

  async function drain(): Promise<void> {
    // Nothing is awaited before the first batch is taken: this drain is no longer one about to take it.
    starting--;
    while (waiting.length > 0) {
      const batch = waiting.splice(0, maxBatch);
      let outcomes: ReadonlyArray<PromiseSettledResult<Out>>;
      try {
        outcomes = await run(batch.map((w) => w.item));
        if (outcomes.length !== batch.length) throw new Error(`a batch of ${batch.length} answered ${outcomes.length} outcomes`);
      } catch (err) {
        for (const w of batch) w.reject(err);
        continue;
      }
      batch.forEach((w, i) => {
        const outcome = outcomes[i];
        if (outcome.status === "fulfilled") w.resolve(outcome.value);
        else w.reject(outcome.reason);
      });
    }
    running--;
  }

  return {
    submit(item) {
      return new Promise<Out>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        // Another drain starts only for an item that no drain about to take its batch will take.
        if (running >= maxInFlight || waiting.length <= starting * maxBatch) return;
        running++;
        starting++;
        // After the current turn: the calls of one turn (one read from a socket) share the first batch.
        queueMicrotask(() => void drain());
      });
    },
  };
}

/** SQLSTATE classes of an entry PostgreSQL will not take (22 data exception, 23 integrity), not of an unreachable server. */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && /^2[23]/.test(code);
}

/**
 * Runs a batch of several entries with `together`, one statement answering each entry's own outcome. A batch of
 * one, a batch with no `together`, and a batch whose data PostgreSQL refuses (one entry it cannot store) go
 * through `alone`, entry by entry, so that one bad entry fails its own call and no other. Any other failure of
 * `together` (the server unreachable, the connection lost) fails the whole batch.
 */
export async function togetherOrEachAlone<In, Out>(
  items: readonly In[],
  alone: (item: In) => Promise<Out>,
  together?: (items: readonly In[]) => Promise<PromiseSettledResult<Out>[]>,
): Promise<PromiseSettledResult<Out>[]> {
  if (together && items.length > 1) {
    try {
      return await together(items);
    } catch (err) {
      if (!isDataError(err)) throw err;
    }
  }
  const outcomes: PromiseSettledResult<Out>[] = [];
  for (const item of items) {
    try {
      outcomes.push({ status: "fulfilled", value: await alone(item) });
    } catch (reason) {
      outcomes.push({ status: "rejected", reason });
    }
  }
  return outcomes;
}

/** `togetherOrEachAlone` for a statement answering one value per entry, which runs each entry alone as a batch of one. */
export function oneStatementOrEachAlone<In, Out>(
  items: readonly In[],
  statement: (items: readonly In[]) => Promise<readonly Out[]>,
): Promise<PromiseSettledResult<Out>[]> {
  return togetherOrEachAlone(
    items,
    async (item) => (await statement([item]))[0],
    async (some) => (await statement(some)).map((value): PromiseSettledResult<Out> => ({ status: "fulfilled", value })),
  );
}
