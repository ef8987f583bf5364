/**
 * The `HealthStep` a loop receives, as it runs inside a loop worker. It replays from the stored
 * steps it is given and reports new work to a `StepHost` (the worker's link to the engine), which
 * persists it. Retries, backoff and per-attempt timeouts run here, next to the loop code.
 */
import { tryParseDuration } from "./duration.ts";
import type { Duration, HealthStep, StepCallback, StepConfig } from "./index.ts";
import { decodeStoredJson, encodeStoredJson } from "./json.ts";
import { type StoredError, type StoredStep, toStoredError } from "./protocol.ts";

export interface StepDoneReport {
  key: string;
  name: string;
  idx: number;
  status: "complete" | "errored";
  result: string | null;
  error: StoredError | null;
  attempts: number;
}

/** When a sleep ends: a time already fixed (sleepUntil, or a replay), or a delay from the engine's now. */
export type SleepTarget = { wakeAt: number } | { delayMs: number };

export interface StepHost {
  /**
   * An attempt is about to start; resolves once it is recorded under the run's lease, so that an
   * engine that lost the run never starts a step another one may be running. `timeoutMs` is 0
   * when the step has no timeout.
   */
  attemptStarted(key: string, name: string, idx: number, attempt: number, timeoutMs: number): Promise<void>;
  /** An attempt failed and a retry follows (fire and forget). */
  attemptFailed(key: string, attempt: number, error: StoredError): void;
  /** Resolves once the outcome is durable. */
  stepDone(report: StepDoneReport): Promise<void>;
  /** Resolves when the sleep is already due; otherwise the engine suspends the run and never answers. */
  sleep(key: string, name: string, idx: number, target: SleepTarget): Promise<void>;
}

interface StepPolicy {
  limit: number;
  delayMs: number;
  backoff: "constant" | "linear" | "exponential";
  timeoutMs: number;
}

const MAX_STEP_NAME_CHARS = 256;

/** An Error with a given `name`, so loops and the run page can tell step failures apart. */
export function namedError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

export function createStep(host: StepHost, storedSteps: readonly StoredStep[]): HealthStep {
  const stored = new Map(storedSteps.map((row) => [row.key, row]));
  const countsByName = new Map<string, number>();
  const usedKeys = new Set<string>();
  let nextIdx = 0;

  /**
   * Keys are given in call order, synchronously, before anything is awaited: the same code calling
   * its steps in the same order gets the same keys on every replay, even for parallel steps.
   */
  function claimKey(name: unknown): { key: string; name: string; idx: number } {
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_STEP_NAME_CHARS) {
      throw new TypeError(`a step name must be a non-empty string of at most ${MAX_STEP_NAME_CHARS} characters`);
    }
    let count = countsByName.get(name) ?? 0;
    let key: string;
    do {
      count += 1;
      key = count === 1 ? name : `${name}#${count}`;
    } while (usedKeys.has(key));
    countsByName.set(name, count);
    usedKeys.add(key);
    const idx = nextIdx;
    nextIdx += 1;
    return { key, name, idx };
  }

  function storedAs(key: string, kind: "do" | "sleep"): StoredStep | undefined {
    const row = stored.get(key);
    if (row !== undefined && row.kind !== kind) {
      throw namedError(
        "NondeterminismError",
        `step "${key}" was a step.${row.kind} when this run last executed and is now a step.${kind}: ` +
          "a loop must call its steps in the same order on every replay",
      );
    }
    return row;
  }

  async function doStep<R>(
    name: string,
    configOrFn: StepConfig | StepCallback<R>,
    maybeFn?: StepCallback<R>,
  ): Promise<R> {
    const step = claimKey(name);
    const fn = typeof configOrFn === "function" ? configOrFn : maybeFn;
    const config = typeof configOrFn === "function" ? {} : configOrFn;
    if (typeof fn !== "function") throw new TypeError(`step.do("${step.name}") needs a function to run`);
    const row = storedAs(step.key, "do");
    if (row?.status === "complete") return decodeStoredJson(row.result) as R;
    if (row?.status === "errored") {
      throw namedError(row.errorName ?? "Error", row.errorMessage ?? `step "${step.key}" failed`);
    }
    // A `running` row is a step interrupted mid-flight by a crash: it runs again.
    return runWithRetries(step, resolvePolicy(config, step.name), fn, row?.attempts ?? 0);
  }

  async function runWithRetries<R>(
    step: { key: string; name: string; idx: number },
    policy: StepPolicy,
    fn: StepCallback<R>,
    previousAttempts: number,
  ): Promise<R> {
    for (let retry = 0; ; retry++) {
      const attempt = previousAttempts + retry + 1;
      await host.attemptStarted(step.key, step.name, step.idx, attempt, policy.timeoutMs);
      const outcome = await runAttempt(fn, policy.timeoutMs, step.name);
      if (outcome.ok) {
        const encoded = encodeStoredJson(outcome.value, `the result of step "${step.name}"`);
        if (!encoded.ok) {
          // Retrying would give the same unserializable value, so the step fails at once.
          const error = namedError("StepResultError", encoded.error);
          await host.stepDone({
            ...step,
            status: "errored",
            result: null,
            error: toStoredError(error),
            attempts: attempt,
          });
          throw error;
        }
        await host.stepDone({ ...step, status: "complete", result: encoded.value, error: null, attempts: attempt });
        return decodeStoredJson(encoded.value) as R;
      }
      const stored = toStoredError(outcome.error);
      if (stored.name === "NonRetryableError" || retry >= policy.limit) {
        await host.stepDone({ ...step, status: "errored", result: null, error: stored, attempts: attempt });
        throw outcome.error;
      }
      host.attemptFailed(step.key, attempt, stored);
      await delay(retryDelayMs(policy, retry + 1));
    }
  }

  async function sleepStep(name: string, targetOnFirstCall: () => SleepTarget): Promise<void> {
    const step = claimKey(name);
    const row = storedAs(step.key, "sleep");
    if (row?.status === "complete") return;
    // The stored wake time wins over a recomputed one: "sleep 1 hour" must not restart on replay.
    const target = row !== undefined && row.wakeAt !== null ? { wakeAt: row.wakeAt } : targetOnFirstCall();
    await host.sleep(step.key, step.name, step.idx, target);
  }

  return {
    do: doStep,
    sleep(name: string, duration: Duration): Promise<void> {
      // Relative: the engine adds it to its own clock, the one wake times are compared against.
      return sleepStep(name, () => ({ delayMs: parseOrThrow(duration, `step.sleep("${name}")`) }));
    },
    sleepUntil(name: string, date: Date | number | string): Promise<void> {
      return sleepStep(name, () => ({ wakeAt: toEpochMs(date, name) }));
    },
  };
}

function resolvePolicy(config: StepConfig, name: string): StepPolicy {
  if (typeof config !== "object" || config === null) {
    throw new TypeError(`step.do("${name}"): the config must be an object like { retries, timeout }`);
  }
  const retries = config.retries;
  const limit = retries?.limit ?? 0;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new RangeError(`step.do("${name}"): retries.limit must be an integer ≥ 0, got ${String(limit)}`);
  }
  const backoff = retries?.backoff ?? "constant";
  if (backoff !== "constant" && backoff !== "linear" && backoff !== "exponential") {
    throw new RangeError(`step.do("${name}"): retries.backoff must be "constant", "linear" or "exponential"`);
  }
  const delayMs = parseOrThrow(retries?.delay ?? 0, `step.do("${name}") retries.delay`);
  const timeoutMs = config.timeout === undefined ? 0 : parseOrThrow(config.timeout, `step.do("${name}") timeout`);
  if (config.timeout !== undefined && timeoutMs === 0) {
    throw new RangeError(`step.do("${name}"): timeout must be longer than 0 ms`);
  }
  return { limit, delayMs, backoff, timeoutMs };
}

/** Wait before retry n (1-based). */
export function retryDelayMs(policy: Pick<StepPolicy, "delayMs" | "backoff">, retry: number): number {
  switch (policy.backoff) {
    case "constant":
      return policy.delayMs;
    case "linear":
      return policy.delayMs * retry;
    case "exponential":
      return policy.delayMs * 2 ** (retry - 1);
  }
}

type AttemptOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

async function runAttempt<R>(fn: StepCallback<R>, timeoutMs: number, name: string): Promise<AttemptOutcome<R>> {
  // Promise.try-like: a synchronous throw becomes a rejection, as an async fn's would.
  const work = new Promise<R>((resolve) => resolve(fn()));
  if (timeoutMs === 0) return work.then(succeeded, failed);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<AttemptOutcome<R>>((resolve) => {
    timer = setTimeout(() => {
      resolve({ ok: false, error: namedError("StepTimeoutError", `step "${name}" timed out after ${timeoutMs} ms`) });
    }, timeoutMs);
  });
  try {
    return await Promise.race([work.then(succeeded, failed), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

function succeeded<R>(value: R): AttemptOutcome<R> {
  return { ok: true, value };
}

function failed(error: unknown): { ok: false; error: unknown } {
  return { ok: false, error };
}

function delay(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}

function parseOrThrow(duration: Duration, what: string): number {
  const parsed = tryParseDuration(duration);
  if (!parsed.ok) throw new RangeError(`${what}: ${parsed.error}`);
  return parsed.value;
}

function toEpochMs(date: Date | number | string, name: string): number {
  const ms = date instanceof Date ? date.getTime() : typeof date === "number" ? date : Date.parse(date);
  if (!Number.isFinite(ms)) throw new RangeError(`step.sleepUntil("${name}"): ${String(date)} is not a valid date`);
  return ms;
}
