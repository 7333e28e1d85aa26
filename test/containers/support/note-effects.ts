import { toolFingerprint } from "@steward/contract";
import { micros, type EffectRow, type SideEffects } from "../../support/faults/side-effects";

/**
 * The container suite's side effects: the notes its runs saved (kb_documents rows of the runs' tenant whose title
 * starts with the run's tag, as note-model.ts writes them), one row per (run, "k<step>") with how many notes of
 * that title exist and when the first and last were written (created_at, the server's clock at the insert).
 */
export const noteEffects: SideEffects = {
  tool: "save_note",
  async read(pool, runIds) {
    const { rows } = await pool.query<Omit<EffectRow, "fingerprint"> & { title: string; body: string }>(
      `SELECT r.id::text AS run_id, split_part(d.title, ' ', 2) AS key, d.title, min(d.body) AS body, count(*)::int AS count,
              ${micros("min(d.created_at)")} AS first_us, ${micros("max(d.created_at)")} AS last_us
         FROM runs r
         JOIN kb_documents d ON d.tenant_id = r.tenant_id AND split_part(d.title, ' ', 1) = substring(r.input FROM '\\[tag:([^\\]]+)\\]')
        WHERE r.id = ANY($1::uuid[])
        GROUP BY r.id, d.title`,
      [runIds],
    );
    return rows.map(({ title, body, ...row }) => ({ ...row, fingerprint: toolFingerprint("save_note", { title, body }) }));
  },
};
