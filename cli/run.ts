/**
 * The run wrapper around citty. citty's own `runMain` prints thrown errors with their stack and
 * exits 1 for everything, and it accepts unknown options silently. This wrapper:
 *  - resolves the subcommand chain first, so an unknown command or option is a usage error
 *    (exit 2) with a "did you mean" suggestion and a pointer to the command's `--help`;
 *  - prints `--help` with the examples each command keeps in its description;
 *  - turns every error into one line (plus an optional hint) and its exit code (docs/interface.md §12.2).
 */
import { type ArgsDef, type CommandMeta, renderUsage, runCommand, type SubCommandsDef } from "citty";
import { CliError, ExitCode, ExitSignal, UsageError } from "./errors.ts";
import { log } from "./lib/log.ts";
import { colorEnabled, styles } from "./lib/output.ts";
import { closest } from "./lib/suggest.ts";
import { CLI_VERSION } from "./lib/version.ts";

type Resolvable<T> = T | Promise<T> | (() => T) | (() => Promise<T>);

/**
 * citty's command type is generic over each command's own args, and a chain mixes them; this is
 * the erased type citty itself uses for an entry of `subCommands`.
 */
type AnyCommand = Exclude<SubCommandsDef[string], Promise<unknown> | (() => unknown)>;

async function resolve<T>(value: Resolvable<T>): Promise<T> {
  return typeof value === "function" ? (value as () => T | Promise<T>)() : value;
}

async function metaOf(cmd: AnyCommand): Promise<CommandMeta> {
  return cmd.meta === undefined ? {} : resolve(cmd.meta);
}

async function argsOf(cmd: AnyCommand): Promise<ArgsDef> {
  return cmd.args === undefined ? {} : resolve(cmd.args);
}

async function subCommandsOf(cmd: AnyCommand): Promise<Record<string, Resolvable<AnyCommand>> | undefined> {
  if (cmd.subCommands === undefined) return undefined;
  const subs = await resolve(cmd.subCommands);
  return Object.keys(subs).length > 0 ? subs : undefined;
}

const toKebab = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();
const toCamel = (name: string): string => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

interface OptionTable {
  /** Every accepted spelling (name, kebab and camel forms, aliases) → its definition. */
  byName: Map<string, { canonical: string; takesValue: boolean }>;
  /** Canonical long names, for suggestions. */
  names: string[];
  positionals: string[];
}

function optionTable(args: ArgsDef): OptionTable {
  const byName: OptionTable["byName"] = new Map();
  const names: string[] = [];
  const positionals: string[] = [];
  for (const [name, def] of Object.entries(args)) {
    if (def.type === "positional") {
      positionals.push(name);
      continue;
    }
    const takesValue = def.type === "string" || def.type === "enum";
    const entry = { canonical: toKebab(name), takesValue };
    names.push(entry.canonical);
    const aliases = "alias" in def && def.alias !== undefined ? [def.alias].flat() : [];
    for (const spelling of [name, toKebab(name), toCamel(name), ...aliases]) byName.set(spelling, entry);
  }
  for (const builtin of ["help", "h"]) byName.set(builtin, { canonical: "help", takesValue: false });
  return { byName, names, positionals };
}

/** Splits argv at the first subcommand name, skipping the values of options that take one. */
function firstPositional(rawArgs: readonly string[], table: OptionTable): number {
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i] ?? "";
    if (arg === "--") return -1;
    if (arg.startsWith("-")) {
      const name = arg.replace(/^-{1,2}/, "");
      if (!name.includes("=") && table.byName.get(name)?.takesValue === true) i++;
      continue;
    }
    return i;
  }
  return -1;
}

interface Resolved {
  cmd: AnyCommand;
  /** The arguments left for this command once its parents' names were consumed. */
  args: string[];
  /** Full command name for messages, e.g. `health tokens create`. */
  name: string;
}

/** Walks the subcommand chain; an unknown name is a usage error with a suggestion. */
async function resolveChain(root: AnyCommand, rawArgs: string[]): Promise<Resolved> {
  let current: Resolved = { cmd: root, args: rawArgs, name: (await metaOf(root)).name ?? "health" };
  for (;;) {
    const subs = await subCommandsOf(current.cmd);
    if (subs === undefined) return current;
    const table = optionTable(await argsOf(current.cmd));
    const index = firstPositional(current.args, table);
    const wanted = index === -1 ? undefined : current.args[index];
    if (wanted === undefined) return current;
    const next = await findSubCommand(subs, wanted);
    if (next === undefined) {
      const suggestion = closest(wanted, Object.keys(subs));
      throw new UsageErrorAt(
        current,
        `Unknown command "${wanted}" for ${current.name}`,
        suggestion !== undefined ? `Did you mean \`${current.name} ${suggestion}\`?` : undefined,
      );
    }
    current = { cmd: next, args: current.args.slice(index + 1), name: `${current.name} ${wanted}` };
  }
}

async function findSubCommand(
  subs: Record<string, Resolvable<AnyCommand>>,
  name: string,
): Promise<AnyCommand | undefined> {
  const direct = subs[name];
  if (direct !== undefined) return resolve(direct);
  for (const sub of Object.values(subs)) {
    const cmd = await resolve(sub);
    const alias = (await metaOf(cmd)).alias;
    if (alias !== undefined && [alias].flat().includes(name)) return cmd;
  }
  return undefined;
}

/** A usage error that knows which command it is about. */
class UsageErrorAt extends UsageError {
  constructor(
    readonly at: Resolved,
    message: string,
    hint?: string,
    /** Print the command's whole usage: when what is missing is a subcommand, the list is the answer. */
    readonly showUsage = false,
  ) {
    super(message, hint);
  }
}

/** Unknown options, missing option values and stray arguments of the final command. */
async function checkArguments(target: Resolved): Promise<void> {
  const table = optionTable(await argsOf(target.cmd));
  const hasSubs = (await subCommandsOf(target.cmd)) !== undefined;
  let positionals = 0;
  for (let i = 0; i < target.args.length; i++) {
    const arg = target.args[i] ?? "";
    if (arg === "--") {
      positionals += target.args.length - i - 1;
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals++;
      continue;
    }
    const [spelled = "", inline] = arg.replace(/^-{1,2}/, "").split(/=(.*)/s, 2);
    const negated = spelled.startsWith("no-") ? spelled.slice(3) : undefined;
    const entry = table.byName.get(spelled) ?? (negated !== undefined ? table.byName.get(negated) : undefined);
    if (entry === undefined) {
      const suggestion = closest(spelled, table.names);
      throw new UsageErrorAt(
        target,
        `Unknown option ${arg.split("=")[0]} for ${target.name}`,
        suggestion !== undefined ? `Did you mean --${suggestion}?` : undefined,
      );
    }
    if (entry.takesValue && inline === undefined) {
      if (i + 1 >= target.args.length) throw new UsageErrorAt(target, `Option --${entry.canonical} needs a value`);
      i++;
    }
  }
  if (!hasSubs && positionals > table.positionals.length) {
    const extra = target.args.filter((a) => !a.startsWith("-"))[table.positionals.length];
    throw new UsageErrorAt(target, `Unexpected argument${extra !== undefined ? ` "${extra}"` : ""} for ${target.name}`);
  }
  if (hasSubs && target.cmd.run === undefined) {
    throw new UsageErrorAt(target, `${target.name} needs a subcommand`, undefined, true);
  }
}

/**
 * A command's description is a summary paragraph, then details and examples. citty's usage
 * shows only the summary (and lists subcommands by theirs); the rest is printed after it.
 */
function splitDescription(description: string | undefined): { summary: string; rest: string } {
  const text = description ?? "";
  const cut = text.indexOf("\n\n");
  return cut === -1 ? { summary: text, rest: "" } : { summary: text.slice(0, cut), rest: text.slice(cut + 2) };
}

export async function renderHelp(target: Resolved, stream: { isTTY?: boolean } = process.stdout): Promise<string> {
  const meta = await metaOf(target.cmd);
  const { summary, rest } = splitDescription(meta.description);
  const subs = await subCommandsOf(target.cmd);
  const shortSubs: Record<string, AnyCommand> = {};
  for (const [name, sub] of Object.entries(subs ?? {})) {
    const cmd = await resolve(sub);
    const subMeta = await metaOf(cmd);
    shortSubs[name] = { ...cmd, meta: { ...subMeta, description: splitDescription(subMeta.description).summary } };
  }
  const usage = await renderUsage({
    ...target.cmd,
    meta: { ...meta, name: target.name, description: summary },
    subCommands: subs === undefined ? undefined : shortSubs,
  });
  const text = (rest === "" ? usage : `${usage}\n\n${rest}`).replace(/[ \t]+$/gm, "").replace(/\n{3,}/g, "\n\n");
  // citty colours by its own rules (NO_COLOR=1 only); ours honour any NO_COLOR and pipes.
  return colorEnabled(stream) ? text : Bun.stripANSI(text);
}

/** `--help` or `-h` as an option, not as the value of one (`--prompt --help` is a prompt). */
async function wantsHelp(target: Resolved): Promise<boolean> {
  const table = optionTable(await argsOf(target.cmd));
  for (let i = 0; i < target.args.length; i++) {
    const arg = target.args[i] ?? "";
    if (arg === "--") return false;
    if (arg === "--help" || arg === "-h") return true;
    const name = arg.replace(/^-{1,2}/, "");
    if (arg.startsWith("-") && !name.includes("=") && table.byName.get(name)?.takesValue === true) i++;
  }
  return false;
}

/** citty's own argument errors (missing required option, bad enum value) are usage errors. */
function isCittyArgError(error: unknown): error is Error {
  return error instanceof Error && error.name === "CLIError";
}

/**
 * The error, its hint, and one line pointing at `--help`: the whole usage (40 lines for some
 * commands) would scroll the error itself away.
 */
async function printUsageError(message: string, hint: string | undefined, at: Resolved, usage = false): Promise<void> {
  const s = styles(colorEnabled(process.stderr));
  log.error(colorEnabled(process.stderr) ? message : Bun.stripANSI(message));
  if (hint !== undefined) process.stderr.write(`  ${s.dim(hint)}\n`);
  if (usage) process.stderr.write(`\n${await renderHelp(at, process.stderr)}\n`);
  else process.stderr.write(`  ${s.dim(`Run \`${at.name} --help\` for its usage and examples.`)}\n`);
}

function printFailure(error: CliError): void {
  const s = styles(colorEnabled(process.stderr));
  log.error(error.message);
  if (error.hint !== undefined) process.stderr.write(`  ${s.dim(error.hint)}\n`);
}

/** Runs the CLI and returns the exit code; never throws, never prints a stack (unless HEALTH_DEBUG=1). */
export async function runCli(root: AnyCommand, rawArgs: string[]): Promise<ExitCode> {
  let target: Resolved = { cmd: root, args: rawArgs, name: "health" };
  try {
    if (rawArgs.length === 1 && (rawArgs[0] === "--version" || rawArgs[0] === "-v")) {
      process.stdout.write(`${CLI_VERSION}\n`);
      return ExitCode.ok;
    }
    target = await resolveChain(root, rawArgs);
    if (await wantsHelp(target)) {
      process.stdout.write(`${await renderHelp(target)}\n`);
      return ExitCode.ok;
    }
    await checkArguments(target);
    await runCommand(root, { rawArgs });
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof ExitSignal) return error.exitCode;
    if (error instanceof UsageErrorAt) {
      await printUsageError(error.message, error.hint, error.at, error.showUsage);
      return ExitCode.usage;
    }
    if (error instanceof UsageError) {
      await printUsageError(error.message, error.hint, target);
      return ExitCode.usage;
    }
    if (isCittyArgError(error)) {
      await printUsageError(error.message, undefined, target);
      return ExitCode.usage;
    }
    if (error instanceof CliError) {
      printFailure(error);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    log.error(`Unexpected error: ${message}`);
    if (process.env.HEALTH_DEBUG === "1" && error instanceof Error && error.stack !== undefined) {
      process.stderr.write(`${error.stack}\n`);
    }
    return ExitCode.failure;
  }
}
