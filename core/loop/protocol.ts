/**
 * Messages between the engine (main thread, owns the database) and a loop worker (runs one run's
 * loop code). Messages after `start` are flat objects of primitives on purpose: Bun posts those
 * without a structured clone, which keeps the per-step round trip in the tens of microseconds.
 */
import type { runSteps } from "../../schema/tables.ts";

export type StepStatus = (typeof runSteps.$inferSelect)["status"];

/** A step row as the worker needs it to replay. */
export interface StoredStep {
  key: string;
  kind: "do" | "sleep";
  status: StepStatus;
  /** JSON text, or null for an undefined result. */
  result: string | null;
  errorName: string | null;
  errorMessage: string | null;
  attempts: number;
  wakeAt: number | null;
}

export type ToWorker =
  | {
      type: "start";
      runId: string;
      file: string;
      exportName: string;
      /** JSON text of event.body, or null when the trigger sent none. */
      input: string | null;
      steps: StoredStep[];
    }
  /** Answer to a `stepDone` or `sleep` request: go on with the run. */
  | { type: "ack"; seq: number }
  /** Asks for the worker's heap size, for the memory watchdog. */
  | { type: "stats" };

export type FromWorker =
  /** An attempt of a step starts; the engine records a `running` row. Not answered. */
  | { type: "attempt"; key: string; name: string; idx: number; attempt: number; timeoutMs: number }
  /** An attempt failed and will be retried. Not answered. */
  | { type: "attemptFailed"; key: string; attempt: number; errorName: string; errorMessage: string }
  /** A step finished; the worker waits for `ack` so that nothing runs before it is durable. */
  | {
      type: "stepDone";
      seq: number;
      key: string;
      name: string;
      idx: number;
      status: "complete" | "errored";
      result: string | null;
      errorName: string | null;
      errorMessage: string | null;
      attempts: number;
    }
  /**
   * A sleep is reached, until `wakeAt` or, when that is null, for `delayMs` from the engine's now.
   * The engine answers `ack` if it is already due, else suspends the run and stops the worker.
   */
  | { type: "sleep"; seq: number; key: string; name: string; idx: number; wakeAt: number | null; delayMs: number }
  /** run() returned (output is JSON text or null) or threw. */
  | { type: "done"; status: "complete"; output: string | null }
  | { type: "done"; status: "errored"; errorName: string; errorMessage: string }
  /** Loop code broke the worker outside any step (uncaught exception, unhandled rejection). */
  | { type: "fatal"; errorName: string; errorMessage: string }
  | { type: "stats"; heapBytes: number };

/** `{ name, message }`, the stored shape of errors on runs and steps. */
export interface StoredError {
  name: string;
  message: string;
}

/** Longest error message kept; loop errors can embed whole payloads. */
export const MAX_ERROR_MESSAGE_CHARS = 2_000;

export function toStoredError(error: unknown): StoredError {
  if (error instanceof Error) {
    return { name: error.name || "Error", message: truncate(error.message) };
  }
  return { name: "Error", message: truncate(`non-Error value thrown: ${describeThrown(error)}`) };
}

function describeThrown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function truncate(message: string): string {
  return message.length > MAX_ERROR_MESSAGE_CHARS ? `${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}…` : message;
}
