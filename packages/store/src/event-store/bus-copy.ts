/**
 * SQL for an event's copy on the bus, from a row `e` of the events table (or of an insert's RETURNING with its
 * columns): the writer that publishes it right after its commit and a relay that publishes it later build the
 * same message. Subject `<prefix><type>` (the prefix is the run's `events_subject`), message id = event id,
 * the stored event as payload, headers naming run, type and seq (and the trace it was written in).
 */
export function busCopyColumns(e: string, subjectPrefix: string): string {
  return `${subjectPrefix} || ${e}.type AS subject, ${e}.event_id::text AS msg_id,
  jsonb_build_object('type', ${e}.type, 'data', ${e}.data, 'metadata', ${e}.metadata || jsonb_build_object(
    'event_id', ${e}.event_id, 'run_id', ${e}.stream_id, 'tenant_id', ${e}.tenant_id, 'seq', ${e}.version,
    'recorded_at', to_char(${e}.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')))::text AS payload,
  jsonb_strip_nulls(jsonb_build_object('traceparent', ${e}.metadata->>'traceparent'))
    || jsonb_build_object('Steward-Run-Id', ${e}.stream_id::text, 'Steward-Event-Type', ${e}.type, 'Steward-Seq', ${e}.version::text) AS headers`;
}
