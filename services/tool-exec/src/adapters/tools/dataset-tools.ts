import { Type } from "@sinclair/typebox";
import type { AnyToolDefinition, ToolContext, ToolOutcome } from "../../domain/tool";
import type { DatasetAccess } from "./dataset/access";
import { DatasetQueryError } from "./dataset/errors";
import type { DatasetReader } from "./dataset/reader";
import type { DatasetReaders } from "./dataset/readers";

const FOCUSED = ["focused"];

const NoInput = Type.Object({}, { additionalProperties: false });
const TableInput = Type.Object({ table: Type.String({ minLength: 1, maxLength: 63, pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }) }, { additionalProperties: false });
const SqlInput = Type.Object({ sql: Type.String({ minLength: 1, maxLength: 10_000 }) }, { additionalProperties: false });
const FocusInput = Type.Object({ dataset: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })) }, { additionalProperties: false });

/** Rows shown to the model; the rest is counted, not shown. */
const SHOWN_ROWS = 20;

/** Why a data tool did not act on a dataset; the model sees the code and the note. */
export const DatasetRefusal = {
  /** The tenant grants the user no dataset of that name (another tenant's, or none at all: the two look alike). */
  notAllowed: "DATASET_NOT_ALLOWED",
  /** The tenant grants it, but this deployment does not configure it (an operator's matter). */
  unavailable: "DATASET_UNAVAILABLE",
  /** The run has focused no dataset yet. */
  notFocused: "DATASET_NOT_FOCUSED",
} as const;

const refusal = (code: string, note: string, extra: Record<string, unknown> = {}): ToolOutcome => ({
  resultCode: code,
  result: { error_code: code, note, ...extra },
});

/** A classified refusal becomes the tool's answer; anything else is the tool failing. */
const refused = (err: unknown): ToolOutcome => {
  if (err instanceof DatasetQueryError) return refusal(err.code, err.message);
  throw err;
};

// Idempotent for the runner (a call found in flight after a crash is sent again), but never answered from a
// stored result: what a data call means depends on the run's focus at that moment, which a later focus changes.
const common = {
  safety: "read" as const,
  policyPoint: "dataset.read" as const,
  abortOnDeny: false,
  requireConfirmation: false,
  idempotent: true,
  reuseResult: false,
};

/**
 * The data tools: focus one of the datasets the tenant grants the user (the state transition that unlocks the
 * rest), explore it (list tables, describe a table, validate a query — these count against the exploration
 * budget), and run a query whose result is summarised. Every call after the focus acts on the run's focused
 * dataset only, and checks the grant again: a revoked grant stops the run's next data call.
 */
export function datasetTools(deps: { access: DatasetAccess; readers: DatasetReaders }): AnyToolDefinition[] {
  const described = new Map(deps.readers.datasets.map((d) => [d.name, d.description]));
  const entry = (name: string) => (described.get(name) ? { name, description: described.get(name) } : { name });

  /** The focused dataset's reader, or the refusal the model sees instead. Never opens a dataset the user may not use. */
  async function focusedReader(ctx: ToolContext): Promise<DatasetReader | ToolOutcome> {
    const focus = await deps.access.focused(ctx.runId, ctx.tenantId, ctx.userId);
    if (!focus) return refusal(DatasetRefusal.notFocused, "no dataset is in focus in this run; call focus_dataset first");
    if (!focus.allowed) return refusal(DatasetRefusal.notAllowed, `dataset "${focus.dataset}" is no longer available to you in this tenant`);
    return deps.readers.reader(focus.dataset) ?? refusal(DatasetRefusal.unavailable, `dataset "${focus.dataset}" is not configured on this deployment`);
  }
  const onFocused =
    <I>(work: (reader: DatasetReader, ctx: ToolContext, input: I) => Promise<ToolOutcome>) =>
    async (ctx: ToolContext, input: I): Promise<ToolOutcome> => {
      const reader = await focusedReader(ctx);
      if (!("select" in reader)) return reader;
      try {
        return await work(reader, ctx, input);
      } catch (err) {
        return refused(err);
      }
    };

  return [
    {
      ...common,
      name: "focus_dataset",
      description: "Focus a dataset so that its tables can be explored and queried. Call it without `dataset` to list the datasets you may focus.",
      input: FocusInput,
      normalise: (i: { dataset?: string }) => (i.dataset === undefined ? {} : { dataset: i.dataset.trim().toLowerCase() }),
      exploration: false,
      async run(ctx, input: { dataset?: string }) {
        const granted = await deps.access.granted(ctx.tenantId, ctx.userId);
        const available = granted.filter((name) => described.has(name)).map(entry);
        if (input.dataset === undefined) {
          return {
            result: { available, note: available.length ? "call focus_dataset with one of these names" : "no dataset is available to you in this tenant" },
          };
        }
        const wanted = input.dataset.trim().toLowerCase();
        if (!granted.includes(wanted)) {
          return refusal(DatasetRefusal.notAllowed, `no dataset "${wanted.slice(0, 63)}" is available to you in this tenant`, { available });
        }
        if (!described.has(wanted)) return refusal(DatasetRefusal.unavailable, `dataset "${wanted}" is not configured on this deployment`, { available });
        await deps.access.focus({ runId: ctx.runId, tenantId: ctx.tenantId, dataset: wanted, stepNo: ctx.stepNo });
        return { result: { focused: wanted, ...entry(wanted) }, nextState: "focused" };
      },
    },
    {
      ...common,
      name: "list_tables",
      description: "List the tables of the focused dataset with their approximate row counts.",
      input: NoInput,
      normalise: () => ({}),
      exploration: true,
      states: FOCUSED,
      run: onFocused<Record<string, never>>(async (reader, ctx) => {
        const rows = await reader.catalog(
          `SELECT c.relname AS table, greatest(c.reltuples, 0)::bigint AS approx_rows
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY c.relname`,
          [reader.schema],
          ctx.signal,
        );
        return { result: { tables: rows } };
      }),
    },
    {
      ...common,
      name: "describe_table",
      description: "Describe a table of the focused dataset: its columns and their types.",
      input: TableInput,
      normalise: (i: { table: string }) => ({ table: i.table.toLowerCase() }),
      exploration: true,
      states: FOCUSED,
      run: onFocused(async (reader, ctx, input: { table: string }) => {
        const table = input.table.toLowerCase();
        const columns = await reader.catalog(
          `SELECT column_name AS name, data_type AS type, is_nullable = 'YES' AS nullable
             FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
          [reader.schema, table],
          ctx.signal,
        );
        if (columns.length === 0) return refusal("TABLE_UNKNOWN", `no table ${table}`);
        return { result: { table, columns } };
      }),
    },
    {
      ...common,
      name: "validate_query",
      description: "Check a SELECT query against the focused dataset without running it (EXPLAIN): cost and estimated rows.",
      input: SqlInput,
      normalise: (i: { sql: string }) => ({ sql: i.sql.trim().replace(/\s+/g, " ") }),
      exploration: true,
      states: FOCUSED,
      run: onFocused(async (reader, ctx, input: { sql: string }) => {
        const plan = await reader.explain(input.sql, ctx.signal);
        return { result: { valid: true, estimated_rows: plan.planRows, cost: plan.totalCost } };
      }),
    },
    {
      ...common,
      name: "run_query",
      description: `Run one SELECT query on the focused dataset (read-only, time-limited). Shows at most ${SHOWN_ROWS} rows.`,
      input: SqlInput,
      normalise: (i: { sql: string }) => ({ sql: i.sql.trim().replace(/\s+/g, " ") }),
      exploration: false,
      states: FOCUSED,
      run: onFocused(async (reader, ctx, input: { sql: string }) => {
        const r = await reader.select(input.sql, ctx.signal);
        const shown = r.rows.slice(0, SHOWN_ROWS);
        const notes: string[] = [];
        if (r.rows.length > SHOWN_ROWS) notes.push(`showing ${SHOWN_ROWS} of ${r.rows.length} rows`);
        if (r.truncated) notes.push(`the result was cut at ${r.rows.length} rows; aggregate or filter to see everything`);
        return {
          result: {
            sql: input.sql.slice(0, 300),
            columns: r.columns,
            rows: shown,
            row_count: r.rows.length,
            ...(notes.length ? { note: notes.join("; ") } : {}),
          },
        };
      }),
    },
  ];
}
