/**
 * The CLI's consola instance. Its reporter prints one line per message with a symbol, not
 * consola's default multi-line badges: an error is a single clear line. Errors and warnings go
 * to stderr, the rest to stdout; colour follows `colorEnabled` (NO_COLOR honoured).
 */
import { type ConsolaReporter, createConsola, type LogObject } from "consola";
import { colorEnabled, styles } from "./output.ts";

function symbolFor(type: LogObject["type"]): { symbol: string; tone: "red" | "yellow" | "green" | "cyan" | "none" } {
  switch (type) {
    case "error":
    case "fatal":
    case "fail":
      return { symbol: "✖", tone: "red" };
    case "warn":
      return { symbol: "⚠", tone: "yellow" };
    case "success":
    case "ready":
      return { symbol: "✔", tone: "green" };
    case "info":
    case "start":
      return { symbol: "ℹ", tone: "cyan" };
    default:
      return { symbol: "", tone: "none" };
  }
}

const lineReporter: ConsolaReporter = {
  log: function writeLine(logObj) {
    const toStderr = logObj.level < 2;
    const stream = toStderr ? process.stderr : process.stdout;
    const s = styles(colorEnabled(stream));
    const text = logObj.args.map((arg: unknown) => (arg instanceof Error ? arg.message : String(arg))).join(" ");
    const { symbol, tone } = symbolFor(logObj.type);
    const mark = tone === "none" ? symbol : s[tone](symbol);
    stream.write(symbol === "" ? `${text}\n` : `${mark} ${text}\n`);
  },
};

export const log = createConsola({ reporters: [lineReporter], level: 3 });
