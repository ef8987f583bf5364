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

export const RUN_STATUSES = ["queued", "running", "sleeping", "complete", "errored", "terminated"] as const;
export type RunStatusName = (typeof RUN_STATUSES)[number];
/** A run in one of these states will not change again. */
export const FINAL_STATUSES: readonly string[] = ["complete", "errored", "terminated"];

/** The server's own patterns (schema/admin.ts), checked before any request is sent. */
export const LOOP_ID_PATTERN = /^loop_[A-Za-z0-9_-]{1,64}$/;
export const RUN_ID_PATTERN = /^run_[A-Za-z0-9]{1,64}$/;

const storedErrorSchema = v.object({ name: v.string(), message: v.string() });

const stepSchema = v.looseObject({
  name: v.string(),
  key: v.string(),
  index: v.number(),
  kind: v.string(),
  status: v.string(),
  attempts: v.number(),
  /** Each try of the step, with its error; servers before the attempt log send none. */
  attemptLog: v.optional(
    v.array(
      v.looseObject({
        attempt: v.number(),
        status: v.string(),
        error: v.nullable(storedErrorSchema),
        startedAt: v.string(),
      }),
    ),
  ),
  result: v.optional(v.unknown()),
  error: v.nullable(storedErrorSchema),
  startedAt: v.string(),
  finishedAt: v.nullable(v.string()),
  wakeAt: v.nullable(v.string()),
});

/** `GET /loop/{org}/{loop}/runs/{runId}` (CONTRACT "Loops"); loose, so newer servers may add fields. */
export const runRecordSchema = v.looseObject({
  id: v.string(),
  workflowInstanceId: v.string(),
  loopId: v.string(),
  status: v.string(),
  input: v.optional(v.unknown()),
  output: v.optional(v.unknown()),
  error: v.nullable(storedErrorSchema),
  trigger: v.optional(v.object({ kind: v.string(), id: v.string(), name: v.string() })),
  attempts: v.optional(v.number()),
  createdAt: v.string(),
  updatedAt: v.string(),
  startedAt: v.optional(v.nullable(v.string())),
  finishedAt: v.optional(v.nullable(v.string())),
  wakeAt: v.optional(v.nullable(v.string())),
  steps: v.array(stepSchema),
});

export type RunStepView = v.InferOutput<typeof stepSchema>;
export type RunView = v.InferOutput<typeof runRecordSchema>;
export type StoredErrorView = v.InferOutput<typeof storedErrorSchema>;

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
  if (FINAL_STATUSES.includes(run.status) || run.status === "queued") return "—";
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

export const errorText = (error: StoredErrorView): string => printable(`${error.name}: ${error.message}`);

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
    (step.attemptLog ?? []).flatMap(({ attempt, error, startedAt }) =>
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
