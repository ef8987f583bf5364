/**
 * Entry point of a loop thread: a Bun `Worker` that runs the loop code of many runs at once, each
 * as its own chain of promises. A run waiting on I/O, a retry delay or the engine's `ack` holds
 * nothing another run needs. The engine in the main thread owns the database and the clock; this
 * side only executes and reports.
 *
 * What runs share here: the thread's event loop, its heap, and the module instance of each loop
 * (module-level variables are shared by the runs of that loop in this thread; each run gets its own
 * Workflow instance). A run that blocks the event loop or exhausts the heap takes the thread down;
 * the engine's watchdog then replaces the thread and resumes the other runs by replay (see
 * pool.ts and runner.ts).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { heapStats } from "bun:jsc";
import type { HealthEvent } from "./index.ts";
import { encodeStoredJson } from "./json.ts";
import { type FromThread, type StoredError, type ToThread, toStoredError } from "./protocol.ts";
import { resolveLoopSdk } from "./sdk-resolver.ts";
import { createStep, namedError, type StepHost } from "./step.ts";

// Loop modules anywhere import `health/loop` (see sdk-resolver.ts).
resolveLoopSdk();

interface ThreadScope {
  postMessage(message: FromThread): void;
  onmessage: ((event: MessageEvent<ToThread>) => void) | null;
}

interface RunnableLoop {
  run(event: HealthEvent<unknown>, step: ReturnType<typeof createStep>): Promise<unknown>;
}

const scope = globalThis as unknown as ThreadScope;
const WORKFLOW_BRAND = Symbol.for("health.loop.workflow");

/** The run whose code is executing, carried through awaits and timers by the runtime. */
const currentRun = new AsyncLocalStorage<string>();
/** Runs executing here, by id, with the slot the engine gave each. */
const runs = new Map<string, { slot: number }>();
/** Requests waiting for the engine's `ack`, by sequence number. */
const pending = new Map<number, { runId: string; resume: () => void }>();
let nextSeq = 1;
/** Where the engine reads which run this thread last entered (see ToThread "init"). */
let entered: Int32Array | undefined;

function enter(runId: string): void {
  const run = runs.get(runId);
  if (entered !== undefined && run !== undefined) Atomics.store(entered, 0, run.slot);
}

// Installed before anything is awaited: Bun drops messages that arrive while no handler exists.
scope.onmessage = function onEngineMessage(event) {
  const message = event.data;
  switch (message.type) {
    case "init":
      entered = new Int32Array(message.current);
      return;
    case "start":
      if (runs.has(message.runId)) return;
      runs.set(message.runId, { slot: message.slot });
      enter(message.runId);
      currentRun.run(message.runId, () => void executeRun(message));
      return;
    case "ack": {
      const waiting = pending.get(message.seq);
      pending.delete(message.seq);
      if (waiting === undefined || !runs.has(waiting.runId)) return;
      enter(waiting.runId);
      waiting.resume();
      return;
    }
    case "abandon":
      // Its pending requests are dropped: the run's promise chain stops at its next step.
      runs.delete(message.runId);
      for (const [seq, waiting] of pending) if (waiting.runId === message.runId) pending.delete(seq);
      return;
    case "ping": {
      const stats = heapStats();
      scope.postMessage({ type: "pong", id: message.id, heapBytes: stats.heapSize + stats.extraMemorySize });
      return;
    }
  }
};

/**
 * An error thrown by a run's timer or callback ends that run, not the thread: timers are wrapped
 * so their exceptions are caught and charged to the run that set them (its id travels with the
 * callback). What still escapes is charged the same way when the runtime can name the run, else
 * logged by the engine as a stray error.
 */
function charge(error: unknown): void {
  const runId = currentRun.getStore();
  const stored = toStoredError(error);
  if (runId !== undefined && runs.has(runId)) {
    runs.delete(runId);
    scope.postMessage({ type: "fatal", runId, errorName: stored.name, errorMessage: stored.message });
  } else {
    scope.postMessage({ type: "stray", errorName: stored.name });
  }
}

function guardTimers(): void {
  type Scheduler = (callback: unknown, ...rest: unknown[]) => unknown;
  const guard = (callback: unknown): unknown =>
    typeof callback !== "function"
      ? callback
      : (...args: unknown[]) => {
          try {
            return callback(...args);
          } catch (error) {
            charge(error);
          }
        };
  for (const name of ["setTimeout", "setInterval", "setImmediate"] as const) {
    const original = globalThis[name] as unknown as Scheduler;
    const wrapped: Scheduler = (callback, ...rest) => original(guard(callback), ...rest);
    Object.assign(globalThis, { [name]: Object.assign(wrapped, original) });
  }
}
guardTimers();
process.on("uncaughtException", charge);
process.on("unhandledRejection", charge);

function request(runId: string, build: (seq: number) => FromThread): Promise<void> {
  const seq = nextSeq++;
  return new Promise((resume) => {
    if (!runs.has(runId)) return;
    pending.set(seq, { runId, resume });
    scope.postMessage(build(seq));
  });
}

function hostFor(runId: string): StepHost {
  return {
    attemptStarted(key, name, idx, attempt, timeoutMs) {
      return request(runId, (seq) => ({ type: "attempt", seq, runId, key, name, idx, attempt, timeoutMs }));
    },
    attemptFailed(key, attempt, error) {
      if (!runs.has(runId)) return;
      scope.postMessage({
        type: "attemptFailed",
        runId,
        key,
        attempt,
        errorName: error.name,
        errorMessage: error.message,
      });
    },
    stepDone(report) {
      return request(runId, (seq) => ({
        type: "stepDone",
        seq,
        runId,
        key: report.key,
        name: report.name,
        idx: report.idx,
        status: report.status,
        result: report.result,
        errorName: report.error?.name ?? null,
        errorMessage: report.error?.message ?? null,
        attempts: report.attempts,
      }));
    },
    sleep(key, name, idx, target) {
      const wakeAt = "wakeAt" in target ? target.wakeAt : null;
      const delayMs = "delayMs" in target ? target.delayMs : 0;
      return request(runId, (seq) => ({ type: "sleep", seq, runId, key, name, idx, wakeAt, delayMs }));
    },
  };
}

async function executeRun(message: Extract<ToThread, { type: "start" }>): Promise<void> {
  const { runId } = message;
  const loaded = await instantiateLoop(message.file, message.exportName);
  if (!loaded.ok) return finish(runId, { ok: false, error: loaded.error });
  let output: unknown;
  try {
    const body: unknown = message.input === null ? undefined : JSON.parse(message.input);
    enter(runId);
    output = await loaded.loop.run({ body }, createStep(hostFor(runId), message.steps));
  } catch (error) {
    return finish(runId, { ok: false, error: toStoredError(error) });
  }
  const encoded = encodeStoredJson(output, "the value returned by run()");
  if (!encoded.ok) return finish(runId, { ok: false, error: { name: "RunOutputError", message: encoded.error } });
  finish(runId, { ok: true, output: encoded.value });
}

function finish(runId: string, outcome: { ok: true; output: string | null } | { ok: false; error: StoredError }): void {
  // A run abandoned meanwhile (terminated, timed out) reports nothing.
  if (!runs.delete(runId)) return;
  if (outcome.ok) scope.postMessage({ type: "done", runId, status: "complete", output: outcome.output });
  else {
    const { name, message } = outcome.error;
    scope.postMessage({ type: "done", runId, status: "errored", errorName: name, errorMessage: message });
  }
}

type Loaded = { ok: true; loop: RunnableLoop } | { ok: false; error: StoredError };

async function instantiateLoop(file: string, exportName: string): Promise<Loaded> {
  try {
    // Imported once per thread: later runs of the same loop get the cached module.
    const module: Record<string, unknown> = await import(file);
    const candidate = module[exportName];
    if (typeof candidate !== "function" || !(WORKFLOW_BRAND in candidate)) {
      const message = `${file} no longer exports a Workflow class named "${exportName}"`;
      return { ok: false, error: toStoredError(namedError("LoopLoadError", message)) };
    }
    const LoopClass = candidate as unknown as new () => RunnableLoop;
    return { ok: true, loop: new LoopClass() };
  } catch (error) {
    const cause = toStoredError(error);
    return {
      ok: false,
      error: { name: "LoopLoadError", message: `could not load the loop: ${cause.name}: ${cause.message}` },
    };
  }
}
