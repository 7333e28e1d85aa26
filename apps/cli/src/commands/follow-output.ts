import type { Context } from "../context";
import { followRun, type FollowOutput } from "../follow";
import { createRenderer } from "../render";
import { exitCodeForRunState, type ExitCode } from "../exit-codes";

/** Events as NDJSON with --json, else rendered; notes go to stderr either way. */
export function followOutput(ctx: Context): FollowOutput {
  const renderer = createRenderer(ctx.style);
  return {
    event(view) {
      ctx.stdout.write(ctx.globals.json ? `${JSON.stringify(view)}\n` : renderer.render(view));
    },
    note(text) {
      ctx.stderr.write(`${ctx.style.dim(text)}\n`);
    },
  };
}

/**
 * Follows the run to its end, answering in place; exit 0 when it succeeded, 1 when it failed or was
 * cancelled. Ctrl-C stops following (exit 130) and leaves the run going.
 */
export async function followToEnd(ctx: Context, runId: string, after = 0): Promise<ExitCode | 130> {
  const onInterrupt = () => {
    ctx.spinner.stop();
    ctx.stderr.write(`\nstopped following; the run goes on (steward runs cancel ${runId} stops it)\n`);
    process.exit(130);
  };
  process.once("SIGINT", onInterrupt);
  try {
    const state = await followRun({ api: ctx.api, output: followOutput(ctx), reader: ctx.reader, spinner: ctx.spinner }, runId, after);
    return exitCodeForRunState(state);
  } finally {
    process.removeListener("SIGINT", onInterrupt);
  }
}
