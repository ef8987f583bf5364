/**
 * The REPL's terminal session: alternate screen, raw mode, cursor and frame drawing, and turning
 * input bytes into keys. Leaving restores everything (raw mode off, cursor shown, main screen
 * back), and it is idempotent so every exit path (Esc, Ctrl+C, SIGTERM, a crash) can call it.
 */

export type Key =
  | { name: "quit" }
  | { name: "toggle-mode" }
  | { name: "submit" }
  | { name: "backspace" }
  | { name: "clear-line" }
  | { name: "redraw" }
  | { name: "eof" }
  | { name: "history-prev" }
  | { name: "history-next" }
  | { name: "page-up" }
  | { name: "page-down" }
  | { name: "text"; text: string };

/** Escape sequences that mean something here: arrows (CSI and SS3 forms) and PageUp/PageDown. */
const SEQUENCES: Readonly<Record<string, Key>> = {
  "\x1b[A": { name: "history-prev" },
  "\x1bOA": { name: "history-prev" },
  "\x1b[B": { name: "history-next" },
  "\x1bOB": { name: "history-next" },
  "\x1b[5~": { name: "page-up" },
  "\x1b[6~": { name: "page-down" },
};

/** One escape sequence at the start of `text`: CSI (ESC [ params final), SS3 (ESC O x) or Alt+key. */
function sequenceAt(text: string): string {
  const csi = /^\x1b\[[0-9;?<>=]*[@-~]/.exec(text) ?? /^\x1bO./.exec(text);
  if (csi) return csi[0];
  return text.slice(0, 2);
}

const ENTER_SCREEN = "\x1b[?1049h\x1b[H\x1b[2J";
const LEAVE_SCREEN = "\x1b[0m\x1b[?2026l\x1b[?25h\x1b[?1049l";

/**
 * Keys from one chunk of raw input. A chunk that is exactly ESC is the Esc key; inside a longer
 * chunk ESC starts an escape sequence: Up/Down and PageUp/PageDown are keys, the others (Left,
 * Right, function keys, Alt+key) are ignored. Ctrl+H arrives as 0x08, so Backspace is DEL (0x7f),
 * as terminals send it by default.
 */
export function decodeKeys(chunk: string): Key[] {
  if (chunk === "\x1b") return [{ name: "quit" }];
  const keys: Key[] = [];
  let text = "";
  const flush = () => {
    if (text !== "") keys.push({ name: "text", text });
    text = "";
  };
  for (let at = 0; at < chunk.length; ) {
    if (chunk[at] === "\x1b") {
      const sequence = sequenceAt(chunk.slice(at));
      const key = SEQUENCES[sequence];
      if (key !== undefined) {
        flush();
        keys.push(key);
      }
      at += sequence.length;
      continue;
    }
    const char = String.fromCodePoint(chunk.codePointAt(at) ?? 0);
    at += char.length;
    const control: Key | undefined =
      char === "\x03"
        ? { name: "quit" }
        : char === "\x08"
          ? { name: "toggle-mode" }
          : char === "\r" || char === "\n"
            ? { name: "submit" }
            : char === "\x7f"
              ? { name: "backspace" }
              : char === "\x15"
                ? { name: "clear-line" }
                : char === "\x0c"
                  ? { name: "redraw" }
                  : char === "\x04"
                    ? { name: "eof" }
                    : undefined;
    if (control !== undefined) {
      flush();
      keys.push(control);
    } else if (char >= " " && char !== "\x7f") {
      text += char;
    }
  }
  flush();
  return keys;
}

export class TerminalSession {
  private active = false;
  private readonly restoreOnExit = () => this.leave();

  constructor(
    private readonly input: NodeJS.ReadStream,
    private readonly output: NodeJS.WriteStream,
  ) {}

  get cols(): number {
    return this.output.columns ?? 80;
  }

  get rows(): number {
    return this.output.rows ?? 24;
  }

  /**
   * Takes over the terminal. `onGone` is called when the terminal goes away (its input ends or
   * fails, as when the window closes): the REPL must quit then, not wait on a dead input.
   */
  enter(onKeys: (keys: Key[]) => void, onResize: () => void, onGone: () => void): void {
    this.active = true;
    process.once("exit", this.restoreOnExit);
    this.output.write(ENTER_SCREEN);
    this.input.setRawMode(true);
    this.input.setEncoding("utf8");
    this.input.on("data", (chunk: string) => onKeys(decodeKeys(chunk)));
    for (const event of ["end", "close", "error"] as const) this.input.once(event, onGone);
    this.output.once("error", onGone);
    this.output.on("resize", onResize);
    this.input.resume();
  }

  /** Draws a whole frame in one write, inside a synchronized update so it never flickers. */
  draw(frame: { lines: readonly string[]; cursor: { row: number; col: number } }): void {
    if (!this.active) return;
    let out = "\x1b[?2026h\x1b[?25l";
    frame.lines.forEach((line, index) => {
      out += `\x1b[${index + 1};1H${line}`;
    });
    out += `\x1b[${frame.cursor.row};${frame.cursor.col}H\x1b[?25h\x1b[?2026l`;
    this.output.write(out);
  }

  leave(): void {
    if (!this.active) return;
    this.active = false;
    process.off("exit", this.restoreOnExit);
    this.input.removeAllListeners("data");
    for (const event of ["end", "close", "error"] as const) this.input.removeAllListeners(event);
    this.output.removeAllListeners("resize");
    try {
      if (this.input.isTTY) this.input.setRawMode(false);
      this.input.pause();
      this.output.write(LEAVE_SCREEN);
    } catch {
      // The terminal is gone: there is nothing left to restore.
    }
  }
}
