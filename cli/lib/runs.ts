/**
 * Runs as the CLI shows them: the shape both `runs.get` (tRPC) and `GET /loop/{org}/{loop}/runs/{id}`
 * return, its validation for the REST path, and the readable rendering shared by `health runs get`
 * and `health trigger --wait`.
 */
import * as v from "valibot";
import { CliError, UsageError } from "../errors.ts";
import { sessionExpired, type TrpcFailure } from "./api.ts";
import { relativeTime } from "../../core/relative-time.ts";
import { out, print, type Styles, table, whenTime } from "./output.ts";
import { isFinishedRunStatus } from "../../schema/statuses.ts";
import { runRecordSchema as runRecordShape, type RunRecord, type StoredError } from "../../schema/runs.ts";

export { LOOP_ID_PATTERN, RUN_ID_PATTERN } from "../../schema/ids.ts";
export { RUN_STATUSES, type RunStatus } from "../../schema/statuses.ts";

/**
 * `GET /loop/{org}/{loop}/runs/{runId}` and `runs.get`: the run record of schema/runs.ts, loose at
 * the top so a newer server may add fields.
 */
export const runRecordSchema = v.looseObject(runRecordShape.entries);

export type RunStepView = RunRecord["steps"][number];
export type RunView = v.InferOutput<typeof runRecordSchema>;

/** What a run list row needs; both the tRPC summary and a full record fit. */
export interface RunSummaryView {
  id: string;
  loopId: string;
  status: string;
  trigger?: { kind: string; name: string };
  createdAt: string;
  startedAt?: string | null;
  finishedAt?: string | null;
}

/** Errors of the runs procedures, in the builder's words. */
export function runFailure(failure: TrpcFailure): CliError | undefined {
  switch (failure.code) {
    case "UNAUTHORIZED":
      return sessionExpired();
    case "NOT_FOUND":
      return new CliError(failure.message, { hint: "health runs list shows the runs of your organization" });
    case "BAD_REQUEST":
      // The server validates ids, filters and cursors; a bad one is a wrong invocation.
      return new UsageError(failure.message);
    default:
      return undefined;
  }
}

/**
 * Text from a loop (step names, error messages) can hold anything; control characters are shown
 * escaped so they cannot move the cursor or recolour the terminal.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `48ms`, `1.2s`, `3m 05s`, `2h 03m`, `1d 04h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1_000);
  const two = (n: number) => String(n).padStart(2, "0");
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m ${two(seconds % 60)}s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)}h ${two(Math.floor((seconds % 3_600) / 60))}m`;
  return `${Math.floor(seconds / 86_400)}d ${two(Math.floor((seconds % 86_400) / 3_600))}h`;
}

/** From start (or trigger) to finish; a run still going shows its time so far with a trailing `…`. */
export function runDuration(
  run: Pick<RunSummaryView, "createdAt" | "startedAt" | "finishedAt" | "status">,
  now = Date.now(),
): string {
  const from = Date.parse(run.startedAt ?? run.createdAt);
  if (run.finishedAt !== null && run.finishedAt !== undefined) return formatDuration(Date.parse(run.finishedAt) - from);
  if (isFinishedRunStatus(run.status) || run.status === "queued") return "—";
  return `${formatDuration(now - from)}…`;
}

/** The trigger tag of the runs list: `token:<token name>` or `user:<email>`. */
export function tagOf(run: Pick<RunSummaryView, "trigger">): string {
  return run.trigger === undefined ? "—" : printable(`${run.trigger.kind}:${run.trigger.name}`);
}

export function styleStatus(s: Styles, status: string): string {
  switch (status) {
    case "complete":
      return s.green(status);
    case "errored":
      return s.red(status);
    case "running":
      return s.cyan(status);
    case "sleeping":
      return s.yellow(status);
    default:
      return s.dim(status);
  }
}

export const errorText = (error: StoredError): string => printable(`${error.name}: ${error.message}`);

/** One-line JSON, cut to `max` characters; `undefined` (no value at all) reads as "none". */
export function compactJson(value: unknown, max = Number.POSITIVE_INFINITY): { text: string; cut: boolean } {
  if (value === undefined) return { text: "none", cut: false };
  const text = JSON.stringify(value) ?? "none";
  return text.length <= max ? { text, cut: false } : { text: `${text.slice(0, Math.max(0, max - 1))}…`, cut: true };
}

/** A JSON value for a labelled field: inline when short, else indented under the label. */
export function labelledJson(
  label: string,
  value: unknown,
  width: number,
  style: (text: string) => string = (text) => text,
): string {
  const compact = compactJson(value).text;
  if (compact.length <= 100) return `${style(label.padEnd(width))}${compact}`;
  const pretty = JSON.stringify(value, null, 2)
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
  return `${style(label)}\n${pretty}`;
}

function stepTiming(step: RunStepView): string {
  if (step.kind === "sleep" && step.status === "sleeping" && step.wakeAt !== null)
    return `until ${whenTime(step.wakeAt)}`;
  const started = relativeTime(step.startedAt);
  if (step.finishedAt === null) return `${started}, running`;
  return `${started} (${formatDuration(Date.parse(step.finishedAt) - Date.parse(step.startedAt))})`;
}

function stepOutcome(step: RunStepView): { text: string; cut: boolean } {
  if (step.error !== null) return { text: errorText(step.error), cut: false };
  if (step.kind === "sleep") return { text: step.status === "complete" ? "slept" : "—", cut: false };
  if (step.status !== "complete") return { text: "—", cut: false };
  return compactJson(step.result, 80);
}

/** The readable view of one run: its fields, then a table of its steps. */
export function printRun(run: RunView): void {
  const s = out();
  const width = 10;
  const label = (name: string) => s.bold(name.padEnd(width));
  print(`${label("Run")}${run.id}`);
  print(`${label("Loop")}${run.loopId}`);
  print(`${label("Status")}${styleStatus(s, run.status)}`);
  if (run.trigger !== undefined) print(`${label("Trigger")}${tagOf(run)}`);
  print(`${label("Created")}${whenTime(run.createdAt)}`);
  if (run.startedAt) print(`${label("Started")}${whenTime(run.startedAt)}`);
  if (run.finishedAt) print(`${label("Finished")}${whenTime(run.finishedAt)}`);
  print(
    `${label("Duration")}${runDuration({ ...run, startedAt: run.startedAt ?? null, finishedAt: run.finishedAt ?? null })}`,
  );
  if (run.status === "sleeping" && run.wakeAt) print(`${label("Wakes")}${whenTime(run.wakeAt)}`);
  print(
    run.input === undefined
      ? `${label("Input")}none (triggered without a body)`
      : labelledJson("Input", run.input, width, s.bold),
  );
  if (run.error !== null) print(`${label("Error")}${s.red(errorText(run.error))}`);
  else if (run.status === "complete") print(labelledJson("Output", run.output, width, s.bold));
  print();
  if (run.steps.length === 0) {
    print(s.dim("No steps yet."));
    return;
  }
  let cut = false;
  const rows = run.steps.map((step, i) => {
    const outcome = stepOutcome(step);
    cut ||= outcome.cut;
    return [
      String(i + 1),
      printable(step.name),
      step.kind === "sleep" ? `${step.status} (sleep)` : step.status,
      String(step.attempts),
      stepTiming(step),
      outcome.text,
    ];
  });
  print(
    table(["#", "STEP", "STATUS", "ATTEMPTS", "STARTED", "RESULT OR ERROR"], rows, {
      headerStyle: s.bold,
    }),
  );
  if (cut) print(s.dim("Long results are cut; --json prints them whole."));
  // The tries that failed before a step's outcome, so a flaky dependency shows in the record.
  // (The last try's error, if any, is the step's own, in the table.)
  const failedTries = run.steps.flatMap((step, i) =>
    step.attemptLog.flatMap(({ attempt, error, startedAt }) =>
      error === null || attempt >= step.attempts
        ? []
        : [`  ${i + 1} ${printable(step.name)}, try ${attempt} (${relativeTime(startedAt)}): ${errorText(error)}`],
    ),
  );
  if (failedTries.length > 0) {
    print();
    print(s.bold("Failed tries"));
    for (const line of failedTries) print(line);
  }
}
