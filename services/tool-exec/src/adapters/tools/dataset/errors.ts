/** Why the dataset refused a query; the model sees the code and a message safe to show it. */
export type DatasetQueryCode = "QUERY_NOT_ALLOWED" | "QUERY_TIMEOUT" | "QUERY_INVALID" | "QUERY_CANCELLED";

/** A query the dataset refused, classified; `message` is safe to show the model. */
export class DatasetQueryError extends Error {
  constructor(
    readonly code: DatasetQueryCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "DatasetQueryError";
  }
}

export const oneStatementOnly = (): DatasetQueryError =>
  new DatasetQueryError("QUERY_NOT_ALLOWED", "one SELECT statement per call; a second statement is not allowed");

/** Maps a PostgreSQL error of the model's query to what the model is told. */
export function classify(err: unknown): DatasetQueryError {
  const code = (err as { code?: string }).code ?? "";
  const message = (err as Error).message ?? "query failed";
  // The extended protocol's own wall: a second statement never reaches the planner.
  if (code === "42601" && /multiple commands/i.test(message)) return oneStatementOnly();
  if (code === "57014") return new DatasetQueryError("QUERY_TIMEOUT", "the query ran longer than allowed and was stopped", { cause: err });
  if (code === "25006" || code === "42501" || code.startsWith("0A")) {
    return new DatasetQueryError("QUERY_NOT_ALLOWED", "only reading queries on the dataset are allowed", { cause: err });
  }
  if (code.startsWith("42") || code.startsWith("22")) return new DatasetQueryError("QUERY_INVALID", message.slice(0, 300), { cause: err });
  return new DatasetQueryError("QUERY_INVALID", "the query could not be run", { cause: err });
}
