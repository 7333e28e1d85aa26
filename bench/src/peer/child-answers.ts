import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

/** Waits for a child's next message of one kind: its JSON line `{"msg": msg, ...}`, within `timeoutMs`. */
export type NextAnswer = (msg: string, timeoutMs: number) => Promise<Record<string, unknown>>;

/**
 * A child's one-line JSON answers on its stdout, each awaited in turn (one at a time); lines that are not JSON are
 * skipped. The child's end fails the answer awaited then, with its exit status and the end of its stderr.
 */
export function childAnswers(child: ChildProcess, who: string): NextAnswer {
  const queued: Array<Record<string, unknown>> = [];
  let waiting: { msg: string; resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void } | null = null;
  let stderr = "";
  let gone: Error | null = null;
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-2000)));
  const deliver = () => {
    if (!waiting) return;
    const at = queued.findIndex((m) => m.msg === waiting!.msg);
    const w = waiting;
    if (at >= 0) {
      waiting = null;
      w.resolve(queued.splice(at, 1)[0]);
    } else if (gone) {
      waiting = null;
      w.reject(gone);
    }
  };
  createInterface({ input: child.stdout! }).on("line", (line) => {
    try {
      queued.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      return; // not a message
    }
    deliver();
  });
  // "close", not "exit": by then every line it wrote has been read.
  child.once("close", (code, signal) => {
    gone = new Error(`${who} exited (code ${code}, signal ${signal})\nstderr: ${stderr}`);
    deliver();
  });
  return (msg, timeoutMs) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting = null;
        reject(new Error(`${who} sent no ${msg} within ${timeoutMs} ms\nstderr: ${stderr}`));
      }, timeoutMs);
      waiting = {
        msg,
        resolve: (m) => (clearTimeout(timer), resolve(m)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      deliver();
    });
}
