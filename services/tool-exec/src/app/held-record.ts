import type { HeldRecord, StoredToolResult } from "../adapters/pg/idempotency-store";

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
 * The record of a call sent held, opened at once, so that its client, lock and lookup overlap the caller's commit
 * instead of following the release (docs/architecture.md, "A tool call sent with its commit"). Opening it runs
 * nothing. Resolves with the record once the call is released. Rejects with the reason the call was dropped, and
 * the record is let go. A release slower than `graceMs` finds the record let go and opens it again: a stalled caller
 * must not keep a call's record from the runner that takes its run over.
 */
export function openedWhileHeld(open: () => OpenedRecord, released: Promise<void>, graceMs: number): Promise<OpenedRecord> {
  let opened: OpenedRecord | null = open();
  const giveBack = () => {
    if (opened) letGo(opened);
    opened = null;
  };
  const grace = setTimeout(giveBack, graceMs);
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
