import type { HeldRecord, StoredToolResult } from "./idempotency-store";

/** A call's record as the handler opens it: a read's lookup, a write's held record, or neither (a tool without one). */
export interface OpenedRecord {
  readonly stored: Promise<StoredToolResult | null> | null;
  readonly held: Promise<HeldRecord> | null;
}

/**
 * How long a held call keeps the record it opened while its caller's release has not come, ms. The release comes
 * once the caller's commit is back: a few ms, tens under load. Well below the shortest run lease (500 ms), so a
 * runner that takes over a run whose runner stalled between its commit and its release never waits for the stalled
 * call's record.
 */
export const HELD_RECORD_GRACE_MS = 250;

/** Lets a record go without waiting: its transaction ends and its lock and client are given back, whatever became of it. */
export function letGo(opened: OpenedRecord): void {
  opened.held?.then((record) => record.release()).catch(() => undefined);
}

/**
 * The record of a call sent held, resolved once the call is released; rejects with the reason the call was dropped.
 * With `early` (a connection is free for it), the record is opened at once, so that its client, lock and lookup
 * overlap the caller's commit instead of following the release (docs/architecture.md, "A tool call sent with its
 * commit"); opening it runs nothing. A dropped call lets it go. A release slower than `graceMs` finds it let go and
 * opens it again: a stalled caller must not keep a call's record from the runner that takes its run over. Without
 * `early`, the record is opened at the release.
 */
export function openedWhileHeld(open: () => OpenedRecord, released: Promise<void>, options: { early: boolean; graceMs: number }): Promise<OpenedRecord> {
  if (!options.early) return released.then(open);
  let opened: OpenedRecord | null = open();
  const giveBack = () => {
    if (opened) letGo(opened);
    opened = null;
  };
  const grace = setTimeout(giveBack, options.graceMs);
  grace.unref();
  return released.then(
    () => {
      clearTimeout(grace);
      return opened ?? open();
    },
    (err: unknown) => {
      clearTimeout(grace);
      giveBack();
      throw err;
    },
  );
}
