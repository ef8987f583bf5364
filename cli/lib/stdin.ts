/** Reading secrets: from a pipe (`--password-stdin`) or typed at a masked prompt. */
import { CliError, UsageError } from "../errors.ts";

/** Everything on stdin, minus one trailing newline (what `echo` and here-strings add). */
export async function readSecretFromStdin(what: string): Promise<string> {
  const text = await Bun.stdin.text();
  const secret = text.replace(/\r?\n$/, "");
  if (secret === "")
    throw new UsageError(`No ${what} on standard input`, `Pipe it in, e.g. printf '%s' "$PASSWORD" | health …`);
  return secret;
}

export function isInteractive(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true;
}

/**
 * Asks for a secret with each character echoed as `*`. The prompt goes to stderr so stdout stays
 * clean for a caller that captures it. Ctrl+C cancels; raw mode is always switched off again.
 */
export function promptSecret(question: string): Promise<string> {
  const stdin = process.stdin;
  const stderr = process.stderr;
  return new Promise<string>((resolve, reject) => {
    let value = "";
    // Raw mode first: nothing typed after the question appears may be echoed by the tty.
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding("utf8");
    stderr.write(question);

    function finish(error?: Error): void {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write("\n");
      if (error !== undefined) reject(error);
      else resolve(value);
    }

    function onData(chunk: string): void {
      // A lone escape sequence (arrow keys…) is not part of a password.
      if (chunk.startsWith("\x1b")) return;
      for (const char of chunk) {
        if (char === "\r" || char === "\n" || char === "\x03" || char === "\x04") {
          const cancelled = char === "\x03" || (char === "\x04" && value === "");
          finish(cancelled ? new CliError("Cancelled") : undefined);
          return;
        }
        if (char === "\x7f" || char === "\b") {
          if (value.length > 0) {
            value = [...value].slice(0, -1).join("");
            stderr.write("\b \b");
          }
          continue;
        }
        if (char < " ") continue;
        value += char;
        stderr.write("*");
      }
    }

    stdin.on("data", onData);
  });
}
