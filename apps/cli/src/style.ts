/** ANSI styling, on only when `enabled` (a TTY, and NO_COLOR unset). */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

const paint = (on: boolean, open: number, close: number) => (text: string) => (on ? `\x1b[${open}m${text}\x1b[${close}m` : text);

export function createStyle(enabled: boolean): Style {
  return {
    enabled,
    bold: paint(enabled, 1, 22),
    dim: paint(enabled, 2, 22),
    red: paint(enabled, 31, 39),
    green: paint(enabled, 32, 39),
    yellow: paint(enabled, 33, 39),
    cyan: paint(enabled, 36, 39),
    magenta: paint(enabled, 35, 39),
  };
}

/** Colour for a stream: only a terminal, and never when NO_COLOR is set (https://no-color.org). */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

/** A one-line spinner on a terminal (stderr); on anything else every call does nothing. */
export interface Spinner {
  start(label: string): void;
  stop(): void;
}

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export function createSpinner(stream: NodeJS.WriteStream, enabled: boolean): Spinner {
  let timer: NodeJS.Timeout | null = null;
  let frame = 0;
  return {
    start(label) {
      if (!enabled || timer) return;
      const draw = () => stream.write(`\r${FRAMES[frame++ % FRAMES.length]} ${label}`);
      draw();
      timer = setInterval(draw, 80);
      timer.unref();
    },
    stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = null;
      stream.write("\r\x1b[2K");
    },
  };
}
