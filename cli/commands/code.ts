/** `health code`: the planner, in its four modes (docs/interface.md §1, "CLI modes"). */
import { defineCommand } from "citty";
import { execStep, DEFAULT_STEP_TIMEOUT_SECONDS } from "../code/exec.ts";
import { requireHostedLogin } from "../code/hosted.ts";
import { printTurn } from "../code/render.ts";
import { appendAudit, auditRow, saveTurn, sessionPath } from "../code/store.ts";
import { type HostedFailure, inspect, planHosted, planOffline, redactManifest, type Turn } from "../code/turn.ts";
import { ExitCode, ExitSignal, UsageError } from "../errors.ts";
import { log } from "../lib/log.ts";
import { printJson } from "../lib/output.ts";
import { manifestForPlanning } from "../lib/workspace.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default defineCommand({
  meta: {
    name: "code",
    description: `Plan an agent loop from a prompt: offline, hosted, interactively, or run a saved step.

  --prompt <text>            one-shot, offline: classify, redact, plan and gate locally; no network.
  --hosted --prompt <text>   one-shot, hosted: sends only the redacted prompt to the planning
                             endpoint (needs health login --token) and shows its plan.
  (no --prompt)              the interactive planner: chat, the plan in a sidebar, Ctrl+H toggles
                             offline/hosted, Esc or Ctrl+C quits. Needs a terminal.
  --exec --session-id <uuid> --step <n>
                             run step n of a saved session through the command gate, without a
                             shell, stdin closed; the result goes to .health/code/runs/run-<uuid>.json.

Sessions are saved to .health/code/sessions/<session_id>.json in the current directory, with the
steps numbered as shown; each turn appends a row (no prompt text) to .health/code/audit.jsonl.
Prompts asking for clinical advice get a redirect and no plan (exit 3), and are never sent.
If the hosted planner is unreachable or fails (5xx, 429, timeout) the offline plan is kept with a
warning (exit 0); if it refuses the token or the request (401, 403, 4xx) the offline plan is kept
and the exit code is 1.

Examples:
  health code --prompt "build an SMS intake agent for our clinic"
  health code --prompt "build an SMS intake agent" --json
  health code --hosted --prompt "route billing questions to the billing team"
  health code --exec --session-id 3f0c9a52-7d1e-4b8a-9c3f-2e6d1a4b5c7d --step 1
  health code`,
  },
  args: {
    prompt: { type: "string", description: "What to build (one-shot mode)", valueHint: "text" },
    hosted: { type: "boolean", description: "Plan with the hosted planner (needs a stored token)" },
    json: { type: "boolean", description: "Print one JSON object (one-shot and --exec)" },
    exec: { type: "boolean", description: "Run a step of a saved session" },
    "session-id": { type: "string", description: "The saved session (with --exec)", valueHint: "uuid" },
    step: { type: "string", description: "The step number, from 1 (with --exec)", valueHint: "n" },
    timeout: {
      type: "string",
      description: `Seconds a step may run (with --exec; default ${DEFAULT_STEP_TIMEOUT_SECONDS})`,
      valueHint: "seconds",
    },
    server: { type: "string", description: "Server URL for hosted planning", valueHint: "url" },
  },
  async run({ args }) {
    if (args.exec === true) {
      if (args.prompt !== undefined || args.hosted === true)
        throw new UsageError("--exec runs a saved step; it takes no --prompt or --hosted");
      await runExec(args["session-id"], args.step, args.timeout, args.json === true);
      return;
    }
    if (args["session-id"] !== undefined || args.step !== undefined || args.timeout !== undefined) {
      throw new UsageError("--session-id, --step and --timeout go with --exec");
    }
    if (args.prompt === undefined) {
      if (args.json === true)
        throw new UsageError("--json needs --prompt (the interactive planner has no JSON output)");
      const { runRepl } = await import("../repl/repl.ts");
      await runRepl({ hosted: args.hosted === true, server: args.server });
      return;
    }
    const prompt = args.prompt.trim();
    if (prompt === "") throw new UsageError("--prompt must not be empty");
    await oneShot(prompt, { hosted: args.hosted === true, json: args.json === true, server: args.server });
  },
});

async function oneShot(
  prompt: string,
  options: { hosted: boolean; json: boolean; server: string | undefined },
): Promise<void> {
  const planning = manifestForPlanning();
  if (planning.warning !== undefined) log.warn(planning.warning);
  const manifest = redactManifest(planning.manifest);
  const sessionId = crypto.randomUUID();
  let turn: Turn;
  let failure: HostedFailure | undefined;
  // A clinical prompt is answered locally and never sent, so it needs no login either.
  if (options.hosted && inspect(prompt).intent !== "clinical_blocked") {
    const login = requireHostedLogin(options.server);
    const hosted = await planHosted(prompt, { sessionId, manifest, login });
    turn = hosted.turn;
    failure = hosted.failure;
  } else {
    turn = planOffline(prompt, { sessionId, manifest });
  }
  saveTurn(turn, undefined);
  appendAudit(auditRow(turn));

  if (options.json) printJson(turn);
  else printTurn(turn, { fallback: failure?.message });

  if (failure !== undefined) {
    if (failure.kind === "refused") {
      log.error(`${failure.message} (the offline plan above was kept)`);
      throw new ExitSignal(ExitCode.failure);
    }
    log.warn(`Hosted planning failed, so this is the offline plan: ${failure.message}`);
  }
  // A block is its one line (printTurn), and exit code 3 says it to scripts.
  if (turn.intent === "clinical_blocked") throw new ExitSignal(ExitCode.blocked);
  if (!options.json) log.info(`Saved ${sessionPath(turn.session_id)}`);
}

async function runExec(
  sessionId: string | undefined,
  stepText: string | undefined,
  timeoutText: string | undefined,
  json: boolean,
): Promise<void> {
  if (sessionId === undefined || sessionId === "") throw new UsageError("--exec needs --session-id <uuid>");
  if (!UUID.test(sessionId)) throw new UsageError(`--session-id must be a UUID, got "${sessionId}"`);
  if (stepText === undefined || stepText === "") throw new UsageError("--exec needs --step <n>");
  if (!/^\d{1,4}$/.test(stepText) || Number(stepText) < 1)
    throw new UsageError(`--step must be a step number from 1, got "${stepText}"`);
  let timeoutSeconds = DEFAULT_STEP_TIMEOUT_SECONDS;
  if (timeoutText !== undefined) {
    if (!/^\d{1,5}$/.test(timeoutText) || Number(timeoutText) < 1)
      throw new UsageError(`--timeout must be a whole number of seconds, got "${timeoutText}"`);
    timeoutSeconds = Number(timeoutText);
  }
  const result = await execStep({
    sessionId: sessionId.toLowerCase(),
    step: Number(stepText),
    timeoutSeconds,
    stream: !json,
  });
  if (json) printJson(result.record);
  else if (result.record.blocked_reason !== null) {
    log.error(
      `Step ${result.record.step} is blocked and was not run: ${result.record.blocked_reason}. Run record: ${result.path}`,
    );
  } else if (result.record.timed_out)
    log.error(`Step ${result.record.step} was stopped after ${timeoutSeconds}s. Run record: ${result.path}`);
  else log.info(`Step ${result.record.step} exited with code ${result.record.exit_code}. Run record: ${result.path}`);
  if (result.exitCode !== 0) throw new ExitSignal(toExitCode(result.exitCode));
}

/** A step is this CLI, so its exit code is already one of ours; anything else is a failure. */
function toExitCode(code: number): ExitCode {
  return code === ExitCode.usage || code === ExitCode.blocked ? code : ExitCode.failure;
}
