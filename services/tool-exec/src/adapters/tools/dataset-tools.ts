import { Type } from "@sinclair/typebox";
import type { AnyToolDefinition, ToolOutcome } from "../../domain/tool";
import { DatasetQueryError } from "./dataset/errors";
import type { DatasetReader } from "./dataset/reader";

const FOCUSED = ["focused"];
const NoInput = Type.Object({}, { additionalProperties: false });
const TableInput = Type.Object({ table: Type.String({ minLength: 1, maxLength: 63, pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }) }, { additionalProperties: false });
const SqlInput = Type.Object({ sql: Type.String({ minLength: 1, maxLength: 10_000 }) }, { additionalProperties: false });
const FocusInput = Type.Object({ dataset: Type.String({ minLength: 1, maxLength: 63 }) }, { additionalProperties: false });

/** Rows shown to the model; the rest is counted, not shown. */
const SHOWN_ROWS = 20;

/** A classified refusal becomes the tool's answer; anything else is the tool failing. */
const refused = (err: unknown): ToolOutcome => {
  if (err instanceof DatasetQueryError) return { resultCode: err.code, result: { error_code: err.code, note: err.message } };
  throw err;
};

const common = { safety: "read" as const, policyPoint: "dataset.read" as const, abortOnDeny: false, requireConfirmation: false };

/**
 * The data tools: focus a dataset (the state transition that unlocks the rest), explore it (list tables,
 * describe a table, validate a query — these count against the exploration budget), and run a query whose
 * result is summarised.
 */
export function datasetTools(reader: DatasetReader, datasetName: string): AnyToolDefinition[] {
  return [
    {
      ...common,
      name: "focus_dataset",
      description: `Focus a dataset so that its tables can be explored and queried. Available: "${datasetName}".`,
      input: FocusInput,
      normalise: (i: { dataset: string }) => ({ dataset: i.dataset.trim().toLowerCase() }),
      idempotent: true,
      exploration: false,
      async run(_ctx, input: { dataset: string }) {
        if (input.dataset.trim().toLowerCase() !== datasetName) {
          return { resultCode: "DATASET_UNKNOWN", result: { error_code: "DATASET_UNKNOWN", note: `only "${datasetName}" is available` } };
        }
        return { result: { focused: datasetName }, nextState: "focused" };
      },
    },
    {
      ...common,
      name: "list_tables",
      description: "List the tables of the focused dataset with their approximate row counts.",
      input: NoInput,
      normalise: () => ({}),
      idempotent: true,
      exploration: true,
      states: FOCUSED,
      async run(ctx) {
        const rows = await reader.catalog(
          `SELECT c.relname AS table, greatest(c.reltuples, 0)::bigint AS approx_rows
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname`,
          [reader.schema],
          ctx.signal,
        );
        return { result: { tables: rows } };
      },
    },
    {
      ...common,
      name: "describe_table",
      description: "Describe a table of the focused dataset: its columns and their types.",
      input: TableInput,
      normalise: (i: { table: string }) => ({ table: i.table.toLowerCase() }),
      idempotent: true,
      exploration: true,
      states: FOCUSED,
      async run(ctx, input: { table: string }) {
        const columns = await reader.catalog(
          `SELECT column_name AS name, data_type AS type, is_nullable = 'YES' AS nullable
             FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
          [reader.schema, input.table.toLowerCase()],
          ctx.signal,
        );
        if (columns.length === 0) return { resultCode: "TABLE_UNKNOWN", result: { error_code: "TABLE_UNKNOWN", note: `no table ${input.table}` } };
        return { result: { table: input.table.toLowerCase(), columns } };
      },
    },
    {
      ...common,
      name: "validate_query",
      description: "Check a SELECT query against the focused dataset without running it (EXPLAIN): cost and estimated rows.",
      input: SqlInput,
      normalise: (i: { sql: string }) => ({ sql: i.sql.trim().replace(/\s+/g, " ") }),
      idempotent: true,
      exploration: true,
      states: FOCUSED,
      async run(ctx, input: { sql: string }) {
        try {
          const plan = await reader.explain(input.sql, ctx.signal);
          return { result: { valid: true, estimated_rows: plan.planRows, cost: plan.totalCost } };
        } catch (err) {
          return refused(err);
        }
      },
    },
    {
      ...common,
      name: "run_query",
      description: `Run one SELECT query on the focused dataset (read-only, time-limited). Shows at most ${SHOWN_ROWS} rows.`,
      input: SqlInput,
      normalise: (i: { sql: string }) => ({ sql: i.sql.trim().replace(/\s+/g, " ") }),
      idempotent: true,
      exploration: false,
      states: FOCUSED,
      async run(ctx, input: { sql: string }) {
        try {
          const r = await reader.select(input.sql, ctx.signal);
          const shown = r.rows.slice(0, SHOWN_ROWS);
          const notes: string[] = [];
          if (r.rows.length > SHOWN_ROWS) notes.push(`showing ${SHOWN_ROWS} of ${r.rows.length} rows`);
          if (r.truncated) notes.push(`the result was cut at ${r.rows.length} rows; aggregate or filter to see everything`);
          return { result: { sql: input.sql.slice(0, 300), columns: r.columns, rows: shown, row_count: r.rows.length, ...(notes.length ? { note: notes.join("; ") } : {}) } };
        } catch (err) {
          return refused(err);
        }
      },
    },
  ];
}
