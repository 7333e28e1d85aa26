/**
 * What a bench command must undo (databases, streams, processes), undone in reverse order once, at the end
 * or on Ctrl-C (then the process exits with 130).
 */
export function createCleanups(say: (text: string) => void) {
  const cleanups: Array<() => Promise<unknown>> = [];
  let cleaning: Promise<void> | null = null;
  const run = () =>
    (cleaning ??= (async () => {
      for (const c of cleanups.reverse()) await c().catch((err) => say(`cleanup: ${String(err)}`));
    })());
  process.once("SIGINT", () => {
    say("interrupted; cleaning up");
    void run().then(() => process.exit(130));
  });
  return { add: (cleanup: () => Promise<unknown>) => void cleanups.push(cleanup), run };
}
