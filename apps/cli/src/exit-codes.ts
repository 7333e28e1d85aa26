/** What the process's exit status says (docs/cli.md). */
export const ExitCode = {
  ok: 0,
  /** A negative outcome: the run ended failed or cancelled, policies invalid, a dry-run denied, a degraded platform, a replay that diverged. */
  negative: 1,
  usage: 2,
  /** The API refused the request (4xx). */
  refused: 3,
  /** The platform could not be reached, or answered 5xx. */
  unreachable: 4,
  /** A bug in the CLI, or the CLI could not be built on first use. */
  internal: 70,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit code for an HTTP answer that is not a success. */
export function exitCodeForStatus(status: number): ExitCode {
  if (status >= 400 && status < 500) return ExitCode.refused;
  return ExitCode.unreachable;
}

/** The exit code of a followed run by its final state: only `succeeded` is 0. */
export function exitCodeForRunState(state: string): ExitCode {
  return state === "succeeded" ? ExitCode.ok : ExitCode.negative;
}
