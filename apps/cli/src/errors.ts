import { ExitCode, exitCodeForStatus } from "./exit-codes";

/** A command line the CLI cannot take: the message is printed with a hint to `--help`; exit 2. */
export class UsageError extends Error {
  readonly exitCode = ExitCode.usage;
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** An RFC 9457 problem document as the gateway answers it (docs/api.md). */
export interface Problem {
  readonly status: number;
  readonly title?: string;
  readonly detail?: string;
  readonly code?: number;
}

/** The API answered with an error status: 4xx exits 3, 5xx exits 4. */
export class ApiError extends Error {
  readonly exitCode: ExitCode;
  constructor(readonly problem: Problem) {
    const words = [problem.title, problem.detail].filter((s): s is string => Boolean(s));
    super(`${problem.status}${problem.code ? ` / ${problem.code}` : ""} ${[...new Set(words)].join(": ")}`.trim());
    this.name = "ApiError";
    this.exitCode = exitCodeForStatus(problem.status);
  }
}

/** The platform could not be reached at all (connection refused, DNS, timeout); exit 4. */
export class UnreachableError extends Error {
  readonly exitCode = ExitCode.unreachable;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "UnreachableError";
  }
}

/** A negative outcome already reported to the user (e.g. invalid policies); exit 1. */
export class NegativeOutcome extends Error {
  readonly exitCode = ExitCode.negative;
  constructor(message: string) {
    super(message);
    this.name = "NegativeOutcome";
  }
}

/** The exit code an error stands for; anything unexpected is an internal error. */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof UsageError || err instanceof ApiError || err instanceof UnreachableError || err instanceof NegativeOutcome) return err.exitCode;
  if ((err as { code?: string })?.code?.startsWith?.("ERR_PARSE_ARGS")) return ExitCode.usage;
  return ExitCode.internal;
}
