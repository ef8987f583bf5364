/**
 * Everything the CLI prints goes through here, so colour is decided in one place:
 * `NO_COLOR` (any non-empty value, https://no-color.org) wins, then `FORCE_COLOR`, then
 * `TERM=dumb`, then whether the stream is a terminal.
 */
import { relativeTime } from "../../core/relative-time.ts";

interface Stream {
  isTTY?: boolean;
}

export function colorEnabled(stream: Stream = process.stdout): boolean {
  const env = process.env;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0") return true;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

/** SGR styles; each one is the identity when colour is off. */
export interface Styles {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  strike(text: string): string;
  inverse(text: string): string;
}

function sgr(open: number, close: number, on: boolean) {
  return function style(text: string): string {
    return on ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  };
}

export function styles(on: boolean): Styles {
  return {
    bold: sgr(1, 22, on),
    dim: sgr(2, 22, on),
    red: sgr(31, 39, on),
    green: sgr(32, 39, on),
    yellow: sgr(33, 39, on),
    cyan: sgr(36, 39, on),
    strike: sgr(9, 29, on),
    inverse: sgr(7, 27, on),
  };
}

/** Styles for standard output, decided once per call site. */
export function out(): Styles {
  return styles(colorEnabled(process.stdout));
}

export function print(line = ""): void {
  process.stdout.write(`${line}\n`);
}

export function printError(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Machine-readable output: one JSON document on stdout, nothing else. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Pads by display width, so ANSI styling and wide characters do not break the columns. */
function pad(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - Bun.stringWidth(text)));
}

/**
 * A plain-text table: a header row, then one row per item. `style` decorates a whole rendered
 * row (e.g. strike-through for a revoked token) after the padding is computed.
 */
export function table(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  options: { style?: (row: number, line: string) => string; headerStyle?: (line: string) => string } = {},
): string {
  const widths = header.map((title, column) =>
    Math.max(Bun.stringWidth(title), ...rows.map((row) => Bun.stringWidth(row[column] ?? ""))),
  );
  const render = (cells: readonly string[]) =>
    cells.map((cell, column) => (column === cells.length - 1 ? cell : pad(cell, widths[column] ?? 0))).join("  ");
  const headerLine = render(header);
  const lines = [options.headerStyle ? options.headerStyle(headerLine) : headerLine];
  rows.forEach((row, index) => {
    const line = render(row);
    lines.push(options.style ? options.style(index, line) : line);
  });
  return lines.join("\n");
}

/**
 * How the list commands print: a sentence when there is nothing (saying how to make the first
 * one), else a table with a bold header, one row per item, `style` decorating a whole row.
 */
export function printList<T>(
  items: readonly T[],
  view: {
    empty: string;
    header: readonly string[];
    row: (item: T, s: Styles) => string[];
    style?: (item: T, line: string, s: Styles) => string;
  },
): void {
  if (items.length === 0) {
    print(view.empty);
    return;
  }
  const s = out();
  const { style } = view;
  print(
    table(
      view.header,
      items.map((item) => view.row(item, s)),
      {
        headerStyle: s.bold,
        ...(style ? { style: (index: number, line: string) => style(items[index] as T, line, s) } : {}),
      },
    ),
  );
}

/** `2026-11-21 23:41` in UTC: short, sortable, and the same on every machine. */
export function shortTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return "never";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 16).replace("T", " ")}Z`;
}

/** A time for a detail view: relative, with the absolute one beside it ("in 58 s, 2026-11-21 23:41Z"). */
export function whenTime(iso: string | null | undefined, now = Date.now()): string {
  if (iso === null || iso === undefined) return "never";
  return `${relativeTime(iso, now)}, ${shortTime(iso)}`;
}
