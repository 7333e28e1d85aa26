/**
 * A confirmation the run asked for and, once the user answered, its decision. `fingerprint` binds it to one
 * exact call (`callFingerprint`); `null` marks a request recorded before approvals were bound, which, as it
 * did then, stands for every call with its `call_id`.
 */
export interface ConfirmationRecord {
  readonly call_id: string;
  readonly fingerprint: string | null;
  readonly decision: "approve" | "reject" | null;
}

function covers(record: ConfirmationRecord, callId: string, fingerprint: string): boolean {
  return record.call_id === callId && (record.fingerprint === null || record.fingerprint === fingerprint);
}

/** The latest confirmation that covers this call, if any was asked for. */
export function confirmationFor(records: readonly ConfirmationRecord[], callId: string, fingerprint: string): ConfirmationRecord | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    if (covers(records[i], callId, fingerprint)) return records[i];
  }
  return undefined;
}

/**
 * Records a decision on the undecided request it names (call id and fingerprint; a decision without a
 * fingerprint decides the request the run awaited). A decision nobody asked for is kept as its own record,
 * as the fold always kept it, so that an old stream folds as it did.
 */
export function recordDecision(
  records: readonly ConfirmationRecord[],
  decided: { readonly call_id: string; readonly decision: "approve" | "reject"; readonly fingerprint?: string },
  awaitedFingerprint: string | null,
): readonly ConfirmationRecord[] {
  const fingerprint = decided.fingerprint ?? awaitedFingerprint;
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i];
    if (r.decision === null && r.call_id === decided.call_id && r.fingerprint === fingerprint) {
      return records.map((x, j) => (j === i ? { ...x, decision: decided.decision } : x));
    }
  }
  return [...records, { call_id: decided.call_id, fingerprint, decision: decided.decision }];
}
