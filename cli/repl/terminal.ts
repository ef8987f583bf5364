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
  | { name: "text"; text: string };

const ENTER_SCREEN = "\x1b[?1049h\x1b[H\x1b[2J";
const LEAVE_SCREEN = "\x1b[0m\x1b[?2026l\x1b[?25h\x1b[?1049l";

/**
 * Keys from one chunk of raw input. A chunk that is exactly ESC is the Esc key; a longer one
 * starting with ESC is an escape sequence (arrows, function keys, Alt+key) and is ignored.
 * Ctrl+H arrives as 0x08, so Backspace is DEL (0x7f), as terminals send it by default.
 */
export function decodeKeys(chunk: string): Key[] {
  if (chunk === "\x1b") return [{ name: "quit" }];
  if (chunk.startsWith("\x1b")) return [];
  const keys: Key[] = [];
  let text = "";
  const flush = () => {
    if (text !== "") keys.push({ name: "text", text });
    text = "";
  };
  for (const char of chunk) {
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
