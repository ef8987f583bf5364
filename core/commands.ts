/**
 * The `health` subcommands a tool plan may contain (docs/interface.md §1.3), as data. The command gate
 * (`gate.ts`) accepts exactly these shapes and nothing else, so adding a subcommand to plans is
 * one entry here. Flags are listed per command; anything not listed is refused.
 */

/** Channels an agent can be scaffolded for. */
export const channels = ["sms", "email", "fax", "web", "voice"] as const;
export type Channel = (typeof channels)[number];

const channelSet: ReadonlySet<string> = new Set(channels);

export function isChannel(s: string): s is Channel {
  return channelSet.has(s);
}

/**
 * What a positional argument or a flag value must look like:
 * - `slug`: a name made of letters, digits, `_` or `-`, starting with a letter or digit (it becomes
 *   part of a loop id, `loop_<name>`, which allows nothing else);
 * - `channel`: one of `channels`;
 * - `text`: free text (a route prompt), non-empty and bounded; the gate's metacharacter rules
 *   apply to it like to the rest of the command.
 */
export type ValueKind = "slug" | "channel" | "text";

/** A flag either stands alone (`--save`) or takes the next argument as its value. */
export type FlagSpec = "boolean" | { readonly value: ValueKind; readonly required?: boolean };

export interface CommandSpec {
  /** The words after `health`, e.g. `["tools", "list"]`. */
  readonly path: readonly string[];
  /** Positional arguments after the path, in order; the count is exact. */
  readonly positionals: readonly { readonly name: string; readonly value: ValueKind }[];
  readonly flags: Readonly<Record<string, FlagSpec>>;
  /** Flags refused with a specific reason rather than "unknown flag". */
  readonly forbidden?: Readonly<Record<string, string>>;
  /** Whether the step needs a stored credential (`health login`) to run. */
  readonly requiresAuth: boolean;
  readonly summary: string;
}

/** Never in a plan: a plan is shown, saved and logged, so it must not carry a secret. */
const NO_SECRETS = "secrets never appear in a plan; run `health login` yourself";

/** Never in a plan: where the CLI sends credentials is the builder's choice, not the planner's. */
const NO_SERVER = "a plan may not choose the server the CLI talks to";

export const commands: readonly CommandSpec[] = [
  {
    path: ["init"],
    positionals: [{ name: "name", value: "slug" }],
    flags: { "--channel": { value: "channel", required: true } },
    requiresAuth: false,
    summary: "scaffold a workspace for a new agent loop",
  },
  {
    path: ["route"],
    positionals: [],
    flags: {
      "--task": { value: "slug", required: true },
      "--prompt": { value: "text", required: true },
      "--save": "boolean",
      "--name": { value: "slug" },
    },
    requiresAuth: false,
    summary: "configure (and with --save, store) a route for a task",
  },
  {
    path: ["tools", "list"],
    positionals: [],
    flags: { "--json": "boolean" },
    requiresAuth: false,
    summary: "list the tools an agent may call",
  },
  {
    path: ["agent", "build"],
    positionals: [],
    flags: {},
    requiresAuth: false,
    summary: "type-check and bundle the workspace's loops into .health/build/",
  },
  {
    path: ["verify"],
    positionals: [],
    flags: { "--json": "boolean" },
    requiresAuth: false,
    summary: "check the workspace, its manifest and its routes",
  },
  {
    path: ["login"],
    positionals: [],
    flags: {},
    forbidden: {
      "--token": NO_SECRETS,
      "--password": NO_SECRETS,
      "--password-stdin": NO_SECRETS,
      "--email": NO_SECRETS,
      "--server": NO_SERVER,
    },
    requiresAuth: false,
    summary: "sign the CLI in (interactive)",
  },
  {
    path: ["code"],
    positionals: [],
    flags: { "--prompt": { value: "text" }, "--hosted": "boolean", "--json": "boolean" },
    forbidden: {
      "--exec": "a plan step may not execute other plan steps",
      "--session-id": "a plan step may not execute other plan steps",
      "--step": "a plan step may not execute other plan steps",
      "--server": NO_SERVER,
    },
    requiresAuth: false,
    summary: "plan with the coding agent",
  },
];

/** How each subcommand is written, for messages: "init, route, tools list, …". */
export const commandNames: readonly string[] = commands.map((spec) => spec.path.join(" "));

/** The spec whose path starts `argv` (which excludes the leading `health`), if any. */
export function findCommand(argv: readonly string[]): CommandSpec | undefined {
  return commands.find((spec) => spec.path.every((word, i) => argv[i] === word));
}
