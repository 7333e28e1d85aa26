import type { Api } from "./api";
import type { Globals } from "./args";
import type { Settings } from "./config";
import type { LineReader } from "./prompt";
import type { Spinner, Style } from "./style";

/** What a command works with: the API, the output streams and the person at the terminal. */
export interface Context {
  readonly globals: Globals;
  readonly env: NodeJS.ProcessEnv;
  readonly settings: Settings;
  /** Where `npm start` keeps its state. */
  readonly home: string;
  readonly configFile: string;
  readonly api: Api;
  readonly style: Style;
  readonly spinner: Spinner;
  readonly reader: LineReader;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Resolves with the token in use (minting a development one if that is the source). */
  token(): Promise<string>;
}

/** Prints `value` as JSON with --json, else the human text `human(value)` makes. */
export function print<T>(ctx: Context, value: T, human: (value: T) => string): void {
  ctx.stdout.write(ctx.globals.json ? `${JSON.stringify(value)}\n` : ensureNewline(human(value)));
}

const ensureNewline = (text: string) => (text === "" || text.endsWith("\n") ? text : `${text}\n`);

/** Left-aligned columns, widths from the content. */
export function table(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return "";
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join("  ")).join("\n") + "\n";
}
