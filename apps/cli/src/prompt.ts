import { createInterface, type Interface } from "node:readline";

/** Reads answers line by line; lines typed (or piped) ahead of a question are kept for it. */
export interface LineReader {
  /** Writes `prompt` (to stderr) and resolves with the next line, or null once the input has ended. */
  ask(prompt: string): Promise<string | null>;
  close(): void;
}

export function createLineReader(input: NodeJS.ReadableStream & { isTTY?: boolean }, output: NodeJS.WritableStream): LineReader {
  let rl: Interface | null = null;
  const lines: string[] = [];
  const waiting: Array<(line: string | null) => void> = [];
  let ended = false;

  function open(): void {
    if (rl) return;
    rl = createInterface({ input, terminal: false });
    rl.on("line", (line) => {
      const next = waiting.shift();
      if (next) next(line);
      else lines.push(line);
    });
    rl.on("close", () => {
      ended = true;
      for (const w of waiting.splice(0)) w(null);
    });
  }

  return {
    ask(prompt) {
      open();
      output.write(prompt);
      if (lines.length > 0) return Promise.resolve(lines.shift() as string);
      if (ended) return Promise.resolve(null);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close() {
      rl?.close();
      // Stops reading stdin so the process can exit while nothing else runs.
      (input as NodeJS.ReadStream).pause?.();
    },
  };
}
