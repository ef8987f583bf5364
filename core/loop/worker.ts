/**
 * Entry point of a loop worker: a Bun `Worker` thread that runs the loop code of one run. The
 * engine in the main thread owns the database and the clock of the run; this side only executes
 * and reports, so a loop that hangs or allocates wildly can be stopped with `worker.terminate()`
 * without taking the server with it.
 */
import { heapStats } from "bun:jsc";
import type { HealthEvent } from "./index.ts";
import { encodeStoredJson } from "./json.ts";
import { type FromWorker, type StoredError, type ToWorker, toStoredError } from "./protocol.ts";
import { createStep, namedError, type StepDoneReport, type StepHost } from "./step.ts";
import { resolveLoopSdk } from "./sdk-resolver.ts";

// Loop modules anywhere import `health/loop` (see sdk-resolver.ts).
resolveLoopSdk();

interface WorkerScope {
  postMessage(message: FromWorker): void;
  onmessage: ((event: MessageEvent<ToWorker>) => void) | null;
}

interface RunnableLoop {
  run(event: HealthEvent<unknown>, step: ReturnType<typeof createStep>): Promise<unknown>;
}

const scope = globalThis as unknown as WorkerScope;
const WORKFLOW_BRAND = Symbol.for("health.loop.workflow");

/** Requests waiting for the engine's `ack`, by sequence number. */
const pending = new Map<number, () => void>();
let nextSeq = 1;
let started = false;

// Installed before anything is awaited: Bun drops messages that arrive while no handler exists.
scope.onmessage = function onEngineMessage(event) {
  const message = event.data;
  switch (message.type) {
    case "start":
      if (!started) {
        started = true;
        void executeRun(message);
      }
      return;
    case "ack":
      pending.get(message.seq)?.();
      pending.delete(message.seq);
      return;
    case "stats": {
      const stats = heapStats();
      scope.postMessage({ type: "stats", heapBytes: stats.heapSize + stats.extraMemorySize });
      return;
    }
  }
};

// Errors thrown from timers or left unhandled by loop code end the run, not the process.
process.on("uncaughtException", function reportUncaught(error) {
  postFatal(toStoredError(error));
});
process.on("unhandledRejection", function reportUnhandled(reason) {
  postFatal(toStoredError(reason));
});

function postFatal(error: StoredError): void {
  scope.postMessage({ type: "fatal", errorName: error.name, errorMessage: error.message });
}

function request(build: (seq: number) => FromWorker): Promise<void> {
  const seq = nextSeq++;
  return new Promise((resolve) => {
    pending.set(seq, resolve);
    scope.postMessage(build(seq));
  });
}

const host: StepHost = {
  attemptStarted(key, name, idx, attempt, timeoutMs) {
    scope.postMessage({ type: "attempt", key, name, idx, attempt, timeoutMs });
  },
  attemptFailed(key, attempt, error) {
    scope.postMessage({ type: "attemptFailed", key, attempt, errorName: error.name, errorMessage: error.message });
  },
  stepDone(report: StepDoneReport) {
    return request((seq) => ({
      type: "stepDone",
      seq,
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
    return request((seq) => ({ type: "sleep", seq, key, name, idx, wakeAt, delayMs }));
  },
};

async function executeRun(message: Extract<ToWorker, { type: "start" }>): Promise<void> {
  const loaded = await instantiateLoop(message.file, message.exportName);
  if (!loaded.ok) return postDoneErrored(loaded.error);
  const body: unknown = message.input === null ? undefined : JSON.parse(message.input);
  let output: unknown;
  try {
    output = await loaded.loop.run({ body }, createStep(host, message.steps));
  } catch (error) {
    return postDoneErrored(toStoredError(error));
  }
  const encoded = encodeStoredJson(output, "the value returned by run()");
  if (!encoded.ok) return postDoneErrored({ name: "RunOutputError", message: encoded.error });
  scope.postMessage({ type: "done", status: "complete", output: encoded.value });
}

function postDoneErrored(error: StoredError): void {
  scope.postMessage({ type: "done", status: "errored", errorName: error.name, errorMessage: error.message });
}

type Loaded = { ok: true; loop: RunnableLoop } | { ok: false; error: StoredError };

async function instantiateLoop(file: string, exportName: string): Promise<Loaded> {
  try {
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
