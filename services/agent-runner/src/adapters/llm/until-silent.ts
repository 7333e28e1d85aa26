/**
 * Passes a stream's items through and calls `onSilence` once if none arrives for `silenceMs` (the first one
 * included). A streamed answer whose connection died without closing (a cut network) would otherwise wait
 * for the kernel to notice, which takes minutes; `onSilence` aborts the request, which ends the iteration.
 */
export async function* untilSilent<T>(items: AsyncIterable<T>, silenceMs: number, onSilence: () => void): AsyncGenerator<T> {
  const timer = setTimeout(onSilence, silenceMs);
  try {
    for await (const item of items) {
      timer.refresh();
      yield item;
    }
  } finally {
    clearTimeout(timer);
  }
}
