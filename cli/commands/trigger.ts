/** `health trigger <loop_id>`: start a run with an API token, as any API client would (docs/interface.md §4.2). */
import { readFileSync } from "node:fs";
import { jsonArg, serverArg } from "../lib/args.ts";
import { defineCommand } from "citty";
import { CliError, ExitCode, ExitSignal, UsageError } from "../errors.ts";
import { log } from "../lib/log.ts";
import { colorEnabled, out, print, printJson, styles } from "../lib/output.ts";
import { isFinishedRunStatus } from "../../schema/statuses.ts";
import { LOOP_ID_PATTERN, labelledJson, runDuration, type RunView } from "../lib/runs.ts";
import {
  IDEMPOTENCY_KEY_PATTERN,
  type LoopTarget,
  readRun,
  resolveOrg,
  resolveTriggerToken,
  startRun,
  TransientError,
  triggerServer,
} from "../lib/trigger.ts";

export default defineCommand({
  meta: {
    name: "trigger",
    description: `Trigger a loop with an API token, optionally waiting for the run to finish.

The body is any JSON value (--data, or --data-file, where - reads standard input) and becomes the
loop's event.body; with neither, the POST has no body and the loop sees event.body === undefined.
It prints the run id; --json prints exactly { runId, workflowInstanceId }. With --wait it polls the
run with the same token (progress on stderr) and exits 0 when it completes, 1 if it errored or was
terminated; --wait --json prints { runId, workflowInstanceId, run } with the final run record.
--idempotency-key K makes a retry safe: the same key and body give the same run, not a second one.

Token (never printed): --token, else HEALTH_TOKEN, else the token stored by health login --token
(used only if it also has a loop scope). It needs scope loop:run or loop:run:<loop_id>; an admin
mints one with health tokens create --name ci --scope loop:run:<loop_id>. Prefer HEALTH_TOKEN to
--token: a command line is visible to other users of the machine.

Organization: --org, else HEALTH_ORG, else the organization of your admin session on this server
(health login --email). Without a session, pass --org: it is the org_… part of each trigger URL in
health loops list, and the orgId printed by health tokens create.

Examples:
  health trigger loop_intake --data '{"text":"reschedule my appointment","source":"sms"}' --wait
  HEALTH_TOKEN=hlth_… health trigger loop_intake --org org_3vQ… --data-file payload.json
  cat payload.json | health trigger loop_intake --data-file - --idempotency-key order-1234 --json
  health trigger loop_nightly`,
  },
  args: {
    loop: { type: "positional", description: "The loop id (loop_…), from health loops list", required: true },
    data: { type: "string", description: "The JSON body (event.body)", valueHint: "json" },
    "data-file": {
      type: "string",
      description: "Read the JSON body from a file; - reads standard input",
      valueHint: "file",
    },
    org: {
      type: "string",
      description: "Organization id (default: HEALTH_ORG, else your admin session's)",
      valueHint: "org_id",
    },
    token: {
      type: "string",
      description: "API token (default: HEALTH_TOKEN, else the stored token)",
      valueHint: "token",
    },
    "idempotency-key": { type: "string", description: "Make retries return the same run", valueHint: "key" },
    wait: { type: "boolean", description: "Wait for the run to finish; exit 1 unless it completes" },
    timeout: {
      type: "string",
      description: "With --wait: give up after this many seconds (the run goes on)",
      valueHint: "seconds",
    },
    ...serverArg,
    ...jsonArg,
  },
  async run({ args }) {
    const loopId = args.loop;
    if (!LOOP_ID_PATTERN.test(loopId)) {
      throw new UsageError(
        `"${loopId}" is not a loop id (loop_…)`,
        /^[A-Za-z0-9_-]{1,64}$/.test(loopId) ? `Did you mean loop_${loopId}?` : "health loops list shows the loop ids",
      );
    }
    const key = args["idempotency-key"];
    if (key !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new UsageError("--idempotency-key must be 1 to 255 printable ASCII characters, without spaces");
    }
    const timeoutMs = parseTimeout(args.timeout, args.wait === true);
    const body = await readBody(args.data, args["data-file"]);

    const server = triggerServer(args.server);
    const token = resolveTriggerToken(server, args.token, loopId);
    const orgId = await resolveOrg(server, args.org);
    const target: LoopTarget = { server, orgId, loopId, token };

    const started = await startRun(target, body, key);
    const ids = { runId: started.runId, workflowInstanceId: started.workflowInstanceId };
    if (args.wait !== true) {
      if (args.json === true) {
        printJson(ids);
        return;
      }
      announce(target, started.runId, started.replayed);
      print(out().dim(`  Follow it: health runs get ${started.runId}`));
      return;
    }
    if (args.json !== true) announce(target, started.runId, started.replayed);
    const run = await waitForRun(target, started.runId, timeoutMs);
    if (args.json === true) {
      printJson({ ...ids, run });
      if (run.status !== "complete") throw new ExitSignal(ExitCode.failure);
      return;
    }
    reportFinished(run);
  },
});

function announce(target: LoopTarget, runId: string, replayed: boolean): void {
  if (replayed) log.success(`Run ${runId} (${target.loopId}) was already started with this idempotency key`);
  else log.success(`Started run ${runId} (${target.loopId})`);
}

function parseTimeout(raw: string | undefined, waiting: boolean): number | undefined {
  if (raw === undefined) return undefined;
  if (!waiting) throw new UsageError("--timeout only applies with --wait");
  const seconds = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`--timeout must be a positive number of seconds; got "${raw}"`);
  }
  return seconds * 1_000;
}

/** The body as the JSON text given (checked to parse), or undefined for a bodiless trigger. */
async function readBody(data: string | undefined, file: string | undefined): Promise<string | undefined> {
  if (data !== undefined && file !== undefined) throw new UsageError("Give either --data or --data-file, not both");
  if (data !== undefined) return checkJson(data, "--data");
  if (file === undefined) return undefined;
  if (file === "-") return checkJson(await Bun.stdin.text(), "The body on standard input");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (code ?? "unreadable");
    throw new CliError(`Cannot read --data-file ${file}: ${why}`);
  }
  return checkJson(text, `--data-file ${file}`);
}

function checkJson(raw: string, what: string): string {
  const text = raw.replace(/^\uFEFF/, "");
  if (text.trim() === "") {
    throw new UsageError(
      `${what} is empty`,
      "Give a JSON value, or neither --data nor --data-file for a bodiless trigger",
    );
  }
  try {
    JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${what} is not valid JSON: ${(error as Error).message}`,
      `Quote it for the shell, e.g. --data '{"text":"hello"}'`,
    );
  }
  return text;
}

/** The progress line on stderr: rewritten in place on a terminal, one line per change otherwise. */
function progressLine(runId: string) {
  const stream = process.stderr;
  const tty = stream.isTTY === true;
  const s = styles(colorEnabled(stream));
  const since = Date.now();
  let last = "";
  let shown = false;
  return {
    update(text: string): void {
      if (tty) {
        const elapsed = ((Date.now() - since) / 1_000).toFixed(1);
        stream.write(`\r\x1b[2K${s.dim(`… ${runId}: ${text} (${elapsed}s)`)}`);
        shown = true;
      } else if (text !== last) {
        stream.write(`… ${runId}: ${text}\n`);
      }
      last = text;
    },
    clear(): void {
      if (tty && shown) stream.write("\r\x1b[2K");
    },
  };
}

const MAX_TRANSIENT_FAILURES = 5;
/** A server that does not answer at all is given a few seconds, not the full retry budget. */
const MAX_UNREACHABLE_FAILURES = 3;

/** Polls GET /loop/{org}/{loop}/runs/{runId} until the run is complete, errored or terminated. */
async function waitForRun(target: LoopTarget, runId: string, timeoutMs: number | undefined): Promise<RunView> {
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs;
  const progress = progressLine(runId);
  let delay = 50;
  let failures = 0;
  let status = "queued";
  progress.update("waiting");
  try {
    for (;;) {
      let pause: number;
      try {
        const run = await readRun(target, runId);
        failures = 0;
        if (isFinishedRunStatus(run.status)) return run;
        status = run.status;
        const done = run.steps.filter((step) => step.status === "complete").length;
        progress.update(`${run.status}, ${done} step${done === 1 ? "" : "s"} done`);
        pause = delay;
        delay = Math.min(Math.round(delay * 1.5), 2_000);
      } catch (error) {
        if (!(error instanceof TransientError)) throw error;
        failures++;
        if (failures > (error.unreachable ? MAX_UNREACHABLE_FAILURES : MAX_TRANSIENT_FAILURES)) {
          // The run was accepted (durably, before the 202): it goes on without us.
          throw new CliError(`Lost the server while waiting (${error.message}); run ${runId} goes on there`, {
            hint: `Check on it later with health runs get ${runId}`,
          });
        }
        progress.update(`retrying (${error.message})`);
        pause = error.retryAfterMs ?? Math.min(500 * 2 ** (failures - 1), 5_000);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new CliError(`Stopped waiting after ${(timeoutMs ?? 0) / 1_000}s: run ${runId} is still ${status}`, {
          hint: `The run goes on; follow it with health runs get ${runId}`,
        });
      }
      await Bun.sleep(Math.min(pause, left));
    }
  } finally {
    progress.clear();
  }
}

function reportFinished(run: RunView): void {
  const s = out();
  const took = runDuration({ ...run, startedAt: run.startedAt ?? null, finishedAt: run.finishedAt ?? null });
  const steps = `health runs get ${run.id} shows its steps`;
  if (run.status === "complete") {
    log.success(`Run ${run.id} complete in ${took}`);
    print(labelledJson("Output", run.output, 8, s.bold));
    return;
  }
  if (run.status === "terminated") throw new CliError(`Run ${run.id} was terminated after ${took}`, { hint: steps });
  const why = run.error !== null ? `: ${run.error.name}: ${run.error.message}` : "";
  throw new CliError(`Run ${run.id} errored after ${took}${why}`.replace(/[\u0000-\u001f\u007f-\u009f]/g, " "), {
    hint: steps,
  });
}
