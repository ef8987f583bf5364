/**
 * The loop SDK, published as `health/loop`.
 *
 * A loop is a class extending `Workflow` whose `run(event, step)` is called once per run. Work
 * that must not be repeated after a crash goes through `step.do`, whose JSON result is persisted;
 * waits go through `step.sleep` / `step.sleepUntil`, which release the run instead of holding a
 * timer. After a restart the run is replayed from the top: completed steps return their stored
 * result without running again, so code outside steps must be deterministic and side-effect free.
 *
 * This file imports nothing on purpose: a bundled loop module pulls in only this SDK.
 */

/** What a run receives: the trigger's JSON body, unchanged, or `undefined` when it sent none. */
export interface HealthEvent<T = unknown> {
  body: T;
}

/**
 * Milliseconds as a number, or a string made of a number and a unit: `"500 ms"`, `"30 seconds"`,
 * `"5 minutes"`, `"2 hours"`, `"1 day"`, `"1 week"`.
 */
export type Duration = number | string;

export type BackoffStrategy = "constant" | "linear" | "exponential";

export interface RetryConfig {
  /** Retries after the first attempt (`limit: 2` means at most 3 attempts). A non-negative integer. */
  limit: number;
  /** Wait before the first retry; the backoff grows it for later retries. Default 0. */
  delay?: Duration;
  /**
   * How the wait grows with retry n (1-based): `constant` = delay, `linear` = delay × n,
   * `exponential` = delay × 2^(n-1). Default `constant`.
   */
  backoff?: BackoffStrategy;
}

export interface StepConfig {
  /** Without it a failing step is not retried. */
  retries?: RetryConfig;
  /** Limit for each attempt; an attempt that runs longer fails (and may be retried). */
  timeout?: Duration;
}

/** A function run by `step.do`: it may be async, and must return a JSON-serializable value. */
export type StepCallback<R> = () => R | Promise<R>;

/**
 * The durable side of a run. Step names are free text; calling the same name twice in one run is
 * fine (the second call is stored as `name#2`), as long as the calls happen in the same order on
 * every replay.
 */
export interface HealthStep {
  /**
   * Runs `fn` once and persists its result. On replay the stored result is returned and `fn` is not
   * called. The value you get back is the JSON round trip of what `fn` returned (a `Date` comes back
   * as its ISO string), identical on the first run and on every replay. Functions, BigInts,
   * symbols, Maps, Sets, non-finite numbers and cycles fail the step; `undefined` is kept.
   */
  do<R>(name: string, fn: StepCallback<R>): Promise<R>;
  do<R>(name: string, config: StepConfig, fn: StepCallback<R>): Promise<R>;
  /** Suspends the run for `duration`; the run is released and resumed by replay when due. */
  sleep(name: string, duration: Duration): Promise<void>;
  /** Suspends the run until `date` (a Date, epoch milliseconds, or a string `Date` can parse). */
  sleepUntil(name: string, date: Date | number | string): Promise<void>;
}

/**
 * Marks the class as a loop across copies of this SDK: a bundled loop carries its own copy, so the
 * engine recognises loops by this registered symbol rather than by class identity.
 */
const WORKFLOW_BRAND: unique symbol = Symbol.for("health.loop.workflow");

export abstract class Workflow<T = unknown> {
  static readonly [WORKFLOW_BRAND] = true;
  /**
   * At most this many runs of the loop execute at once, over every server sharing the database
   * (like a queue's concurrency limit): `static concurrency = 5` for a loop that calls an EHR API
   * with a rate limit. The others wait as `queued`. Unset: only the server's limits apply.
   */
  static concurrency?: number;
  abstract run(event: HealthEvent<T>, step: HealthStep): Promise<unknown>;
}

/** Thrown from a step to fail it at once: the remaining retries are skipped. */
export class NonRetryableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "NonRetryableError";
  }
}
