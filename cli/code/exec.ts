/**
 * `health code --exec`: run one saved step through the strict gate. The saved file is not
 * trusted (anyone could have edited it): the command is checked again by `checkCommand` right
 * before it runs, and it runs without a shell, as this CLI itself, with stdin closed and a
 * timeout. Every attempt, run or refused, leaves a run file saying what happened.
 */
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { checkCommand } from "../../core/gate.ts";
import { CliError, ExitCode, UsageError } from "../errors.ts";
import { log } from "../lib/log.ts";
import { colorEnabled } from "../lib/output.ts";
import { MANIFEST_FILE } from "../lib/workspace.ts";
import {
  loadSession,
  locateSession,
  type RunRecord,
  type SavedSession,
  type SavedStep,
  saveWorkspaceDir,
  writeRun,
} from "./store.ts";

/** The CLI's own entry point: steps run as `[bun, cli/bin.ts, ...argv]`, never through a shell. */
export const CLI_ENTRY = join(import.meta.dir, "..", "bin.ts");

/** Output kept in the run file per stream; the terminal still gets all of it. */
const MAX_CAPTURED_BYTES = 1024 * 1024;

export const DEFAULT_STEP_TIMEOUT_SECONDS = 300;

export interface ExecOptions {
  sessionId: string;
  step: number;
  timeoutSeconds: number;
  /** Stream the step's output to this process's stdout/stderr as it arrives. */
  stream: boolean;
  /** Stops the step (SIGTERM), as when the REPL that started it quits. */
  signal?: AbortSignal;
}

export interface ExecResult {
  record: RunRecord;
  /** Where the run record was written. */
  path: string;
  /** 3 when the gate refused the step (it did not run), else the step's own exit code. */
  exitCode: number;
}

/** Steps are numbered from 1, as shown; anything else is a usage error naming the valid range. */
function pickStep(plan: readonly SavedStep[], step: number, sessionId: string): SavedStep {
  const chosen = plan[step - 1];
  if (chosen === undefined) {
    const range =
      plan.length === 0
        ? "it has no steps"
        : plan.length === 1
          ? "the only step is 1"
          : `valid steps are 1-${plan.length}`;
    throw new UsageError(`Step ${step} is out of range for session ${sessionId}: ${range}`);
  }
  return chosen;
}

/**
 * Why a step may not run, or its argv (without the leading `health`). A step that would run
 * `health code --exec` is refused too: a saved plan must not be able to chain executions.
 */
export function gateStep(step: SavedStep): { ok: true; argv: string[] } | { ok: false; reason: string } {
  if (step.blocked_reason !== null)
    return { ok: false, reason: `the planner blocked this step: ${step.blocked_reason}` };
  const verdict = checkCommand(step.command);
  if (!verdict.ok) return { ok: false, reason: verdict.reason };
  const argv = verdict.argv[0] === "health" ? verdict.argv.slice(1) : [...verdict.argv];
  if (argv[0] === "code" && argv.some((a) => a === "--exec" || a.startsWith("--exec="))) {
    return { ok: false, reason: "a saved step may not execute another saved step" };
  }
  return { ok: true, argv };
}

/** The plan's `health init <name>` step: its number and the workspace name, if it has one. */
function initStepOf(plan: readonly SavedStep[]): { step: number; name: string } | undefined {
  for (const step of plan) {
    const verdict = checkCommand(step.command);
    if (!verdict.ok) continue;
    const argv = verdict.argv[0] === "health" ? verdict.argv.slice(1) : verdict.argv;
    const name = argv[0] === "init" ? argv.slice(1).find((arg) => !arg.startsWith("-")) : undefined;
    if (name !== undefined) return { step: step.step, name };
  }
  return undefined;
}

/** Where `health init <name>`, run in `base`, put the workspace: `./<name>`, or `base` itself. */
function scaffolded(base: string, name: string): string | undefined {
  if (existsSync(join(base, name, MANIFEST_FILE))) return name;
  if (existsSync(join(base, MANIFEST_FILE))) return ".";
  return undefined;
}

/**
 * The directory a step runs in. A plan runs from where it was made; once its `health init` step
 * has scaffolded the workspace, the steps after it run inside that workspace.
 */
function stepDirectory(
  session: SavedSession,
  base: string,
  step: SavedStep,
  init: ReturnType<typeof initStepOf>,
): string {
  // A plan with no init step works in the workspace an earlier plan of the session made, if any.
  if (init === undefined) return join(base, session.workspace_dir ?? ".");
  if (step.step <= init.step) return base;
  const workspace = session.workspace_dir ?? scaffolded(base, init.name);
  if (workspace === undefined) {
    throw new CliError(
      `Step ${step.step} runs in the workspace that step ${init.step} creates, which does not exist yet`,
      {
        hint: `Run step ${init.step} first: health code --exec --session-id ${session.session_id} --step ${init.step}`,
      },
    );
  }
  return join(base, workspace);
}

export async function execStep(options: ExecOptions): Promise<ExecResult> {
  const home = locateSession(options.sessionId);
  const session = loadSession(options.sessionId, home);
  const step = pickStep(session.tool_plan, options.step, options.sessionId);
  const startedAt = new Date().toISOString();
  const base = { run_id: crypto.randomUUID(), session_id: session.session_id, step: step.step, command: step.command };
  const verdict = gateStep(step);
  if (!verdict.ok) {
    const record: RunRecord = {
      ...base,
      argv: null,
      blocked_reason: verdict.reason,
      exit_code: null,
      timed_out: false,
      stdout: "",
      stderr: "",
      started_at: startedAt,
      finished_at: new Date().toISOString(),
    };
    return { record, path: writeRun(record, home), exitCode: ExitCode.blocked };
  }
  const init = initStepOf(session.tool_plan);
  const cwd = stepDirectory(session, home, step, init);
  if (options.stream) {
    const where = relative(process.cwd(), cwd);
    log.info(
      `Step ${step.step}: ${step.command}${where === "" ? "" : ` (in ${where.startsWith(".") ? where : `./${where}`})`}`,
    );
  }
  const child = Bun.spawn([process.execPath, CLI_ENTRY, ...verdict.argv], {
    cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: options.timeoutSeconds * 1000,
    killSignal: "SIGTERM",
    ...(options.signal ? { signal: options.signal } : {}),
    // The step writes into a pipe; it should colour exactly when its output ends up on our terminal.
    env: { ...process.env, FORCE_COLOR: options.stream && colorEnabled(process.stdout) ? "1" : "0" },
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    pump(child.stdout, options.stream ? process.stdout : undefined),
    pump(child.stderr, options.stream ? process.stderr : undefined),
    child.exited,
  ]);
  const timedOut = child.signalCode !== null && child.killed;
  const record: RunRecord = {
    ...base,
    argv: verdict.argv,
    blocked_reason: null,
    exit_code: timedOut ? null : exitCode,
    timed_out: timedOut,
    stdout,
    stderr,
    started_at: startedAt,
    finished_at: new Date().toISOString(),
  };
  const path = writeRun(record, home);
  if (exitCode === 0 && !timedOut && init?.step === step.step) {
    const workspace = scaffolded(cwd, init.name);
    if (workspace !== undefined) saveWorkspaceDir(session, relative(home, join(cwd, workspace)) || ".", home);
  }
  return { record, path, exitCode: timedOut ? ExitCode.failure : exitCode };
}

/** Copies a child's stream to ours as it arrives, and keeps (a bounded amount of) it. */
async function pump(source: ReadableStream<Uint8Array>, sink: NodeJS.WriteStream | undefined): Promise<string> {
  const decoder = new TextDecoder();
  let kept = "";
  let bytes = 0;
  for await (const chunk of source) {
    sink?.write(chunk);
    if (bytes < MAX_CAPTURED_BYTES) {
      kept += decoder.decode(chunk.subarray(0, MAX_CAPTURED_BYTES - bytes), { stream: true });
      bytes += chunk.byteLength;
    }
  }
  return kept + decoder.decode();
}
