/**
 * Messages between the engine (main thread, owns the database) and a loop thread (runs the loop
 * code of many runs at once, see thread.ts). Every message about a run names it; requests carry a
 * sequence number unique within their thread and wait for the engine's `ack`. Messages after
 * `start` are flat objects of primitives on purpose: Bun posts those without a structured clone,
 * which keeps the per-step round trip in the tens of microseconds.
 */
import type { StoredError } from "../../schema/runs.ts";
import type { STEP_STATUSES } from "../../schema/statuses.ts";

export type { StoredError } from "../../schema/runs.ts";
export type StepStatus = (typeof STEP_STATUSES)[number];

/** A step row as a loop thread needs it to replay. */
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

export type ToThread =
  /**
   * First message: `current` is a one-slot shared array where the thread writes the slot number
   * of the run whose code it last entered, which the engine can read while the thread is stuck.
   */
  | { type: "init"; current: SharedArrayBuffer }
  | {
      type: "start";
      runId: string;
      /** Small number naming the run in `current`; unique among the thread's runs. */
      slot: number;
      file: string;
      exportName: string;
      /** JSON text of event.body, or null when the trigger sent none. */
      input: string | null;
      steps: StoredStep[];
    }
  /** Answer to a request: go on with the run. */
  | { type: "ack"; seq: number }
  /** The run ended elsewhere (terminated, timed out, taken over): drop it, answer nothing more. */
  | { type: "abandon"; runId: string }
  /** Liveness and memory probe of the watchdog. */
  | { type: "ping"; id: number };

export type FromThread =
  /** An attempt of a step starts; the engine records it under the run's lease, then acks. */
  | {
      type: "attempt";
      seq: number;
      runId: string;
      key: string;
      name: string;
      idx: number;
      attempt: number;
      timeoutMs: number;
    }
  /** An attempt failed and will be retried. Not answered. */
  | { type: "attemptFailed"; runId: string; key: string; attempt: number; errorName: string; errorMessage: string }
  /** A step finished; the run waits for `ack` so that nothing runs before it is durable. */
  | {
      type: "stepDone";
      seq: number;
      runId: string;
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
   * The engine answers `ack` if it is already due, else suspends the run and abandons it here.
   */
  | {
      type: "sleep";
      seq: number;
      runId: string;
      key: string;
      name: string;
      idx: number;
      wakeAt: number | null;
      delayMs: number;
    }
  /** run() returned (output is JSON text or null) or threw. */
  | { type: "done"; runId: string; status: "complete"; output: string | null }
  | { type: "done"; runId: string; status: "errored"; errorName: string; errorMessage: string }
  /** The run's code threw outside any step and outside run() (a timer, a callback). */
  | { type: "fatal"; runId: string; errorName: string; errorMessage: string }
  /** Something threw that no run can be named for (an unhandled rejection): logged, not fatal. */
  | { type: "stray"; errorName: string }
  | { type: "pong"; id: number; heapBytes: number };

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
