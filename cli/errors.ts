/**
 * The CLI's error vocabulary. Commands throw these; the run wrapper (cli/run.ts) is the one
 * place that turns them into a single printed line and an exit code, so no stack trace ever
 * reaches a builder's terminal.
 *
 * Exit codes (docs/interface.md §12.2): 0 success, 1 failure, 2 usage error, 3 blocked by the
 * command gate or the safety boundary.
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  blocked: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A failure the builder can act on: one line, exit 1. */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** A second line that says what to do about it. */
  readonly hint: string | undefined;

  constructor(message: string, options: { exitCode?: ExitCode; hint?: string } = {}) {
    super(message);
    this.name = "CliError";
    this.exitCode = options.exitCode ?? ExitCode.failure;
    this.hint = options.hint;
  }
}

/** Wrong invocation: the run wrapper prints the command's usage after the message, exit 2. */
export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.usage, hint });
    this.name = "UsageError";
  }
}

/** Refused by the command gate or the clinical safety boundary: exit 3. */
export class BlockedError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, { exitCode: ExitCode.blocked, hint });
    this.name = "BlockedError";
  }
}

/**
 * Ends the command with an exit code after it has already printed everything it wanted to
 * (a clinical redirect, a failed checklist): nothing more is printed.
 */
export class ExitSignal extends Error {
  readonly exitCode: ExitCode;

  constructor(exitCode: ExitCode) {
    super(`exit ${exitCode}`);
    this.name = "ExitSignal";
    this.exitCode = exitCode;
  }
}
