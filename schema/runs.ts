/**
 * The run record, once: what `GET /loop/{org}/{loop}/runs/{runId}` answers, what the runs
 * procedures of the admin API return, what the CLI parses and the console shows. The engine's
 * types (core/loop/queries.ts) and the OpenAPI document derive from these schemas.
 */
import * as v from "valibot";
import { ATTEMPT_STATUSES, RUN_STATUSES, STEP_KINDS, STEP_STATUSES, TRIGGER_KINDS } from "./statuses.ts";

const isoTime = v.string();

/** `{ name, message }`: how errors of runs, steps and attempts are stored and shown. */
export const storedErrorSchema = v.object({ name: v.string(), message: v.string() });

export const triggerTagSchema = v.object({
  kind: v.picklist(TRIGGER_KINDS),
  id: v.string(),
  name: v.string(),
});

export const runStepAttemptSchema = v.object({
  attempt: v.number(),
  status: v.picklist(ATTEMPT_STATUSES),
  error: v.nullable(storedErrorSchema),
  startedAt: isoTime,
  finishedAt: v.nullable(isoTime),
});

export const runStepSchema = v.object({
  name: v.string(),
  key: v.string(),
  index: v.number(),
  kind: v.picklist(STEP_KINDS),
  status: v.picklist(STEP_STATUSES),
  attempts: v.number(),
  /** Each try of a `step.do`, oldest first, with the error of each one that failed. */
  attemptLog: v.array(runStepAttemptSchema),
  /** The step's JSON result; absent for `undefined`. */
  result: v.optional(v.unknown()),
  error: v.nullable(storedErrorSchema),
  startedAt: isoTime,
  finishedAt: v.nullable(isoTime),
  wakeAt: v.nullable(isoTime),
});

export const runSummarySchema = v.object({
  id: v.string(),
  workflowInstanceId: v.string(),
  loopId: v.string(),
  orgId: v.string(),
  status: v.picklist(RUN_STATUSES),
  /** event.body; absent when the trigger sent none. */
  input: v.optional(v.unknown()),
  output: v.optional(v.unknown()),
  error: v.nullable(storedErrorSchema),
  trigger: triggerTagSchema,
  /** Executions so far (a sleep and a crash recovery each start a new one). */
  attempts: v.number(),
  createdAt: isoTime,
  updatedAt: isoTime,
  startedAt: v.nullable(isoTime),
  finishedAt: v.nullable(isoTime),
  wakeAt: v.nullable(isoTime),
});

export const runRecordSchema = v.object({ ...runSummarySchema.entries, steps: v.array(runStepSchema) });

export type StoredError = v.InferOutput<typeof storedErrorSchema>;
export type TriggerTag = v.InferOutput<typeof triggerTagSchema>;
export type RunStepAttempt = v.InferOutput<typeof runStepAttemptSchema>;
export type RunStepRecord = v.InferOutput<typeof runStepSchema>;
export type RunSummary = v.InferOutput<typeof runSummarySchema>;
export type RunRecord = v.InferOutput<typeof runRecordSchema>;
