/**
 * The command gate (docs/interface.md §1.3) and the plan sanitizer built on it. Every step of every plan, from
 * the embedded planner, an upstream model or a cache, passes `checkCommand` before it is shown or
 * run; `health code --exec` checks again before it runs one.
 *
 * It is stricter than docs/interface.md §1.3 asks, on purpose: besides `; & | \` $ < >` and newlines it refuses every
 * control character, invisible or unusual whitespace, and backslashes (so quoting means the same
 * here as in a POSIX shell), and it checks each flag and value against `commands.ts`.
 * It fails closed: anything it cannot read is blocked, and nothing here throws.
 */
import type { DraftPlan, DraftStep, ToolPlanStep } from "../schema/wire.ts";
import {
  type CommandSpec,
  channels,
  commandNames,
  commands,
  type FlagSpec,
  findCommand,
  isChannel,
  type ValueKind,
} from "./commands.ts";

export const MAX_COMMAND_CHARS = 1_000;
export const MAX_MESSAGE_LINES = 6;
export const MAX_LINE_CHARS = 200;
export const MAX_PURPOSE_CHARS = 200;
export const MAX_KIND_CHARS = 32;
export const MAX_STEPS = 20;
/** Longest free-text flag value (a route prompt). */
export const MAX_TEXT_VALUE_CHARS = 500;

export type GateVerdict = { ok: true; argv: string[] } | { ok: false; reason: string };

export interface SanitizedPlan {
  assistant_message: string;
  tool_plan: ToolPlanStep[];
  blockedSteps: number;
}

const PREFIX = "health ";
const METACHARACTERS = /[;&|`$<>]/;
/** C0 and C1 controls, DEL. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Format characters (zero-width, bidi overrides), line/paragraph separators, spaces other than " ". */
const INVISIBLE = /[\p{Cf}\p{Zl}\p{Zp}]|(?! )\p{Zs}/u;
const SLUG = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

function blocked(reason: string): GateVerdict {
  return { ok: false, reason };
}

function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Splits on spaces and tabs, honouring single and double quotes the way a POSIX shell does when
 * there are no escapes: quotes group, are removed, and adjacent pieces join (`--name="a b"` is
 * one argument). Returns null for an unbalanced quote.
 */
export function tokenize(command: string): string[] | null {
  const tokens: string[] = [];
  let current = "";
  let inToken = false;
  let quote: string | null = null;
  for (const char of command) {
    if (quote !== null) {
      if (char === quote) quote = null;
      else current += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      inToken = true;
    } else if (char === " " || char === "\t") {
      if (inToken) tokens.push(current);
      current = "";
      inToken = false;
    } else {
      current += char;
      inToken = true;
    }
  }
  if (quote !== null) return null;
  if (inToken) tokens.push(current);
  return tokens;
}

/** Character-level rules: they hold whatever the words are. */
function checkCharacters(command: string): string | null {
  if (command.length > MAX_COMMAND_CHARS) return `command is longer than ${MAX_COMMAND_CHARS} characters`;
  if (!command.startsWith(PREFIX)) return "command must start with `health ` (the health CLI and a space)";
  if (/[\n\r]/.test(command)) return "command contains a newline";
  const control = CONTROL.exec(command);
  if (control !== null) return `command contains a control character (${codePoint(control[0])})`;
  const invisible = INVISIBLE.exec(command);
  if (invisible !== null)
    return `command contains an invisible or unusual space character (${codePoint(invisible[0])})`;
  const meta = METACHARACTERS.exec(command);
  if (meta !== null) return `command contains the shell metacharacter ${meta[0] === "`" ? "'`'" : `\`${meta[0]}\``}`;
  if (command.includes("\\")) return "command contains a backslash; escapes are not allowed";
  return null;
}

function checkValue(kind: ValueKind, value: string, what: string): string | null {
  switch (kind) {
    case "slug":
      return SLUG.test(value) ? null : `${what} must be a name of letters, digits, '_' or '-' (at most 64)`;
    case "channel":
      return isChannel(value) ? null : `${what} must be one of ${channels.join(", ")}`;
    case "text":
      if (value.trim().length === 0) return `${what} must not be empty`;
      return value.length <= MAX_TEXT_VALUE_CHARS ? null : `${what} is longer than ${MAX_TEXT_VALUE_CHARS} characters`;
    default: {
      const unreachable: never = kind;
      return `${what} has an unknown kind ${String(unreachable)}`;
    }
  }
}

function unknownSubcommand(argv: readonly string[]): string {
  const first = argv[0];
  if (first === undefined) return `command names no subcommand; expected one of: ${commandNames.join(", ")}`;
  const partial = commands.filter((spec) => spec.path[0] === first).map((spec) => spec.path.join(" "));
  if (partial.length > 0) return `\`health ${first}\` needs a subcommand: ${partial.join(", ")}`;
  return `\`health ${first}\` is not a documented subcommand; expected one of: ${commandNames.join(", ")}`;
}

interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
}

function commandLabel(spec: CommandSpec): string {
  return `\`health ${spec.path.join(" ")}\``;
}

/** The spec of a flag of this command, or why the flag is refused. */
function flagSpecOf(spec: CommandSpec, flag: string): FlagSpec | { refused: string } {
  if (spec.forbidden !== undefined && Object.hasOwn(spec.forbidden, flag)) {
    return { refused: `${commandLabel(spec)} may not be given ${flag} here: ${spec.forbidden[flag]}` };
  }
  const known = Object.hasOwn(spec.flags, flag) ? spec.flags[flag] : undefined;
  return known ?? { refused: `${commandLabel(spec)} does not accept ${flag}` };
}

/** Reads flags and positionals against the spec; a string is the reason it failed. */
function parseArgs(spec: CommandSpec, args: readonly string[]): ParsedArgs | string {
  const parsed: ParsedArgs = { positionals: [], flags: new Map() };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (!arg.startsWith("-")) {
      parsed.positionals.push(arg);
      continue;
    }
    // "--name=value" carries its value inline; "--name value" takes the next argument.
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    const flagSpec = flagSpecOf(spec, flag);
    if (typeof flagSpec === "object" && "refused" in flagSpec) return flagSpec.refused;
    if (parsed.flags.has(flag)) return `${flag} is given twice`;
    if (flagSpec === "boolean") {
      if (inline !== undefined) return `${flag} takes no value`;
      parsed.flags.set(flag, true);
      continue;
    }
    const value = inline ?? args[i + 1];
    if (value === undefined || (inline === undefined && value.startsWith("--"))) return `${flag} needs a value`;
    if (inline === undefined) i++;
    const problem = checkValue(flagSpec.value, value, flag);
    if (problem !== null) return problem;
    parsed.flags.set(flag, value);
  }
  return parsed;
}

function checkShape(spec: CommandSpec, parsed: ParsedArgs): string | null {
  const name = commandLabel(spec);
  const expected = spec.positionals.length;
  if (parsed.positionals.length !== expected) {
    const names = spec.positionals.map((p) => `<${p.name}>`).join(" ");
    return `${name} takes ${expected === 0 ? "no arguments" : `${expected} argument${expected === 1 ? "" : "s"} (${names})`}, got ${parsed.positionals.length}`;
  }
  for (const [i, positional] of spec.positionals.entries()) {
    const problem = checkValue(positional.value, parsed.positionals[i] ?? "", `<${positional.name}>`);
    if (problem !== null) return problem;
  }
  for (const [flag, flagSpec] of Object.entries(spec.flags)) {
    if (flagSpec !== "boolean" && flagSpec.required === true && !parsed.flags.has(flag)) return `${name} needs ${flag}`;
  }
  return null;
}

function checkWords(argv: readonly string[]): string | null {
  const spec = findCommand(argv);
  if (spec === undefined) return unknownSubcommand(argv);
  const parsed = parseArgs(spec, argv.slice(spec.path.length));
  if (typeof parsed === "string") return parsed;
  return checkShape(spec, parsed);
}

/** The gate: ok with the argv to run (without `health`), or the reason the command is blocked. */
export function checkCommand(command: string): GateVerdict {
  try {
    if (typeof command !== "string") return blocked("command is not a string");
    const characters = checkCharacters(command);
    if (characters !== null) return blocked(characters);
    const tokens = tokenize(command);
    if (tokens === null) return blocked("command has an unbalanced quote");
    const argv = tokens.slice(1);
    const words = checkWords(argv);
    return words === null ? { ok: true, argv } : blocked(words);
  } catch {
    return blocked("command could not be checked");
  }
}

// ---------------------------------------------------------------------------------------------
// Text that will be printed in a terminal.

/** CSI and OSC sequences (colours, cursor moves, hyperlinks, title changes) and lone escapes. */
const ANSI =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]?|\u009b[0-?]*[ -/]*[@-~]/g;
const CONTROLS_BUT_NEWLINE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** Bidirectional overrides and marks: they make a terminal show text in another order than it is. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Removes ANSI escapes, bidi controls and every control character except newline (tab → space). */
export function stripTerminalControls(text: string): string {
  return text
    .replace(/\r\n?|[\u2028\u2029]/g, "\n")
    .replace(/\t/g, " ")
    .replace(ANSI, "")
    .replace(CONTROLS_BUT_NEWLINE, "")
    .replace(BIDI, "");
}

/** Makes control characters visible (`\x1b`, `\n`) so a blocked command can be shown safely. */
export function escapeControlChars(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (char) => {
      if (char === "\n") return "\\n";
      if (char === "\r") return "\\r";
      if (char === "\t") return "\\t";
      const code = char.charCodeAt(0);
      return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
    },
  );
}

/** Cuts to at most `max` UTF-16 units, at a word boundary when one is near, ending with "…". */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const space = text.lastIndexOf(" ", end);
  if (space > max * 0.6) end = space;
  // Never split a surrogate pair.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end).trimEnd()}…`;
}

function oneLine(text: unknown, max: number): string {
  if (typeof text !== "string") return "";
  return cut(stripTerminalControls(text).replace(/\s+/g, " ").trim(), max);
}

function cleanKind(kind: unknown): string {
  const clean = oneLine(kind, MAX_KIND_CHARS + 1);
  return clean.length === 0 ? "other" : clean.slice(0, MAX_KIND_CHARS);
}

/**
 * At most 6 lines, none longer than 200 characters, no terminal controls, no blank lines at
 * either end and no runs of blank lines. A message that had to be cut ends with "…".
 */
export function cleanMessage(message: unknown): string {
  if (typeof message !== "string") return "";
  const lines = stripTerminalControls(message)
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line, i, all) => line.length > 0 || (all[i - 1] ?? "").length > 0);
  while (lines.length > 0 && (lines[0] ?? "").length === 0) lines.shift();
  while (lines.length > 0 && (lines.at(-1) ?? "").length === 0) lines.pop();
  const kept = lines.slice(0, MAX_MESSAGE_LINES).map((line) => cut(line, MAX_LINE_CHARS));
  if (lines.length > MAX_MESSAGE_LINES) {
    const last = kept.pop() ?? "";
    kept.push(last.endsWith("…") ? last : cut(`${last}…`, MAX_LINE_CHARS));
  }
  return kept.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Steps and plans.

function blockedStep(reason: string): ToolPlanStep {
  return { kind: "other", command: "", purpose: "", requires_auth: false, blocked_reason: reason };
}

/** A step as it may leave the server: gated, with its text cleaned. Never throws. */
export function sanitizeStep(step: DraftStep): ToolPlanStep {
  try {
    if (typeof step !== "object" || step === null) return blockedStep("step is not an object");
    const command = typeof step.command === "string" ? step.command : "";
    // checkCommand refuses a non-string itself; an upstream reply is only typed, not trusted.
    const verdict = checkCommand(step.command);
    const spec = verdict.ok ? findCommand(verdict.argv) : undefined;
    return {
      kind: cleanKind(step.kind),
      command,
      purpose: oneLine(step.purpose, MAX_PURPOSE_CHARS),
      requires_auth: step.requires_auth === true || spec?.requiresAuth === true,
      blocked_reason: verdict.ok ? null : verdict.reason,
    };
  } catch {
    return blockedStep("step could not be read");
  }
}

/** The plan as it may leave the server: every step gated, the message cut to 6 clean lines. */
export function sanitizePlan(draft: DraftPlan): SanitizedPlan {
  try {
    const steps: readonly unknown[] = Array.isArray(draft?.tool_plan) ? draft.tool_plan : [];
    const tool_plan = steps.slice(0, MAX_STEPS).map((step) => sanitizeStep(step as DraftStep));
    return {
      assistant_message: cleanMessage(draft?.assistant_message),
      tool_plan,
      blockedSteps: tool_plan.filter((step) => step.blocked_reason !== null).length,
    };
  } catch {
    return { assistant_message: "", tool_plan: [], blockedSteps: 0 };
  }
}
