/**
 * Why a loop module failed to load, with the place to fix it. Bun reports syntax errors as a
 * `BuildMessage` with a position, several at once as an `AggregateError`, unresolved imports as a
 * `ResolveMessage` (specifier and referrer, no position), and errors thrown by top-level code as
 * ordinary errors whose stack names the module.
 */
import { readFileSync } from "node:fs";

export interface LoadFailure {
  /** The file to fix: the loop module, or a module it imports. */
  file: string;
  line?: number;
  column?: number;
  message: string;
}

/** `file:line:column`, or the file alone when the line is unknown. */
export function formatLocation({ file, line, column }: Omit<LoadFailure, "message">): string {
  return line === undefined ? file : `${file}:${line}${column === undefined ? "" : `:${column}`}`;
}

function positionOf(error: object): { file: string; line: number; column: number } | null {
  const position = (error as { position?: unknown }).position;
  if (typeof position !== "object" || position === null) return null;
  const { file, line, column } = position as Record<string, unknown>;
  if (typeof file !== "string" || typeof line !== "number" || typeof column !== "number") return null;
  return { file, line, column };
}

/** Where `specifier` is imported in `file`: its first quoted occurrence. */
function importPosition(file: string, specifier: string): LoadFailure | null {
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  for (const [index, text] of source.split("\n").entries()) {
    for (const quote of ['"', "'", "`"]) {
      const column = text.indexOf(`${quote}${specifier}${quote}`);
      if (column !== -1) return { file, line: index + 1, column: column + 1, message: "" };
    }
  }
  return null;
}

/** The first stack frame inside `file`. */
function frameIn(stack: string, file: string): { line: number; column: number } | null {
  for (const text of stack.split("\n")) {
    const at = text.indexOf(`${file}:`);
    if (at === -1) continue;
    const match = /^(\d+):(\d+)/.exec(text.slice(at + file.length + 1));
    if (match) return { line: Number(match[1]), column: Number(match[2]) };
  }
  return null;
}

/** Describes why importing the loop module `file` threw `error`. */
export function describeLoadError(error: unknown, file: string): LoadFailure {
  if (error instanceof AggregateError && error.errors.length > 0) {
    const all: LoadFailure[] = error.errors.map((inner: unknown) => describeLoadError(inner, file));
    const [first] = all;
    if (all.length === 1 && first) return first;
    const rest = all.slice(1).map((failure) => `${formatLocation(failure)}: ${failure.message}`);
    return { ...(first ?? { file }), message: `${first?.message} (${rest.length} more: ${rest.join("; ")})` };
  }
  if (typeof error !== "object" || error === null) return { file, message: String(error) };
  const message = "message" in error && typeof error.message === "string" ? error.message : String(error);
  const position = positionOf(error);
  if (position) return { ...position, message };
  const { specifier, referrer } = error as { specifier?: unknown; referrer?: unknown };
  if (typeof specifier === "string") {
    const from = typeof referrer === "string" && referrer !== "" ? referrer : file;
    const at = importPosition(from, specifier);
    return { ...(at ?? { file: from }), message: `cannot find module "${specifier}"` };
  }
  const name = error instanceof Error && error.name !== "Error" ? `${error.name}: ` : "";
  const frame = error instanceof Error ? frameIn(error.stack ?? "", file) : null;
  return { file, ...frame, message: `${name}${message}` };
}
