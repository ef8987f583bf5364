/**
 * The durable loop runtime. Runs are rows in SQLite; executing one means claiming it under a lease,
 * replaying its loop in a Bun Worker from the stored steps, and persisting each new step before the
 * loop may go on. The main thread keeps the database, the leases and the watchdogs, so a loop that
 * throws, hangs (even in a synchronous `while (true)`) or allocates without bound costs its own run,
 * never the server.
 *
 * Lifecycle: queued → running → (sleeping → running)* → complete | errored | terminated. A run
 * stopped mid-way (engine stop, crash) goes back to the queue, or is taken over once its lease
 * expires, and resumes by replay: steps whose completion was persisted never run again.
 */
import type { Database } from "bun:sqlite";
import { totalmem } from "node:os";
import { newId } from "../ids.ts";
import type { Result } from "../result.ts";
import { loopEnvironment } from "./environment.ts";
import { decodeStoredJson, encodeStoredJson } from "./json.ts";
import type { FromWorker, StepStatus, StoredError, ToWorker } from "./protocol.ts";
import type { LoopDefinition } from "./registry.ts";
import {
  type AttemptRow,
  createRunStore,
  parseStoredError,
  type RunRow,
  type RunStatus,
  type StepRow,
  type TriggerKind,
} from "./store.ts";

export type { RunStatus, TriggerKind } from "./store.ts";

export interface EngineLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface EngineOptions {
  /** The gateway's connection (see server/db.ts): WAL, busy timeout, migrations applied. */
  sqlite: Database;
  /** The registered loops, or a function returning them so a reload takes effect on the next claim. */
  loops: Map<string, LoopDefinition> | (() => Map<string, LoopDefinition>);
  /** Runs executing at once, each in its own worker. Default 4. */
  concurrency?: number;
  /** How long a claim lasts without a heartbeat before another engine may take the run. Default 30 s. */
  leaseMs?: number;
  /** Lease renewal interval. Default leaseMs / 3. */
  heartbeatMs?: number;
  /** Interval at which the database is checked for work another process made due. Default 1 s. */
  pollMs?: number;
  /** Wall time one execution of a run may take before its worker is stopped. Default 15 minutes. */
  runTimeoutMs?: number;
  /** How long stop() waits for in-flight steps before stopping their workers. Default 10 s. */
  stopTimeoutMs?: number;
  /** Heap one loop worker may use. Default 512 MB. */
  memoryLimitMb?: number;
  /** Resident size of the whole process above which the worst loop worker is stopped. Default: 75% of RAM, at most 4 GB. */
  processMemoryLimitMb?: number;
  /** Interval of the memory watchdog. Default 1 s. */
  memoryCheckMs?: number;
  /**
   * The engine is the only one using this database file (the default): at start, runs left
   * `running` by any other owner belong to a dead process and are resumed at once rather than
   * after their lease expires. Set false when several processes share the file.
   */
  exclusive?: boolean;
  /**
   * `process.env` of the loop workers. Default: the server's environment without the `HEALTH_*`
   * variables, which hold the gateway's own secrets (system key, upstream API key).
   */
  workerEnv?: Record<string, string>;
  logger?: EngineLogger;
  /** Clock of the persisted times and wake-ups, for tests. Default Date.now. */
  now?: () => number;
}

export interface TriggerTag {
  kind: TriggerKind;
  id: string;
  name: string;
}

export interface EnqueueRequest {
  orgId: string;
  loopId: string;
  /** event.body: any JSON value, or undefined when the trigger sent no body. */
  input: unknown;
  trigger: TriggerTag;
}

export interface EnqueueResult {
  runId: string;
  workflowInstanceId: string;
}

export interface RunStepRecord {
  name: string;
  key: string;
  index: number;
  kind: "do" | "sleep";
  status: StepStatus;
  attempts: number;
  /** Each try of a `step.do`, oldest first, with the error of each one that failed. */
  attemptLog: RunStepAttempt[];
  result: unknown;
  error: StoredError | null;
  startedAt: string;
  finishedAt: string | null;
  wakeAt: string | null;
}

export interface RunStepAttempt {
  attempt: number;
  status: AttemptRow["status"];
  error: StoredError | null;
  startedAt: string;
  finishedAt: string | null;
}

export interface RunSummary {
  id: string;
  workflowInstanceId: string;
  loopId: string;
  orgId: string;
  status: RunStatus;
  /** event.body; undefined when the trigger sent none. */
  input: unknown;
  output: unknown;
  error: StoredError | null;
  trigger: TriggerTag;
  /** Executions so far (a sleep and a crash recovery each start a new one). */
  attempts: number;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  wakeAt: string | null;
}

export interface LoopStats {
  runs: number;
  complete: number;
  errored: number;
  lastRun: { status: RunStatus; createdAt: string } | null;
}

export interface RunRecord extends RunSummary {
  steps: RunStepRecord[];
}

export interface ListOptions {
  loopId?: string;
  status?: RunStatus;
  /** 1–100, default 20. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface RunPage {
  runs: RunSummary[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export type ListError = { code: "invalid_cursor"; message: string };

export type TerminateError =
  | { code: "not_found"; message: string }
  | { code: "already_finished"; message: string; status: RunStatus };

export interface Engine {
  /** This engine's lease owner id. */
  readonly id: string;
  /** Runs executing in this engine right now. */
  readonly activeCount: number;
  /** Durably queues a run; the row is committed when this returns. Wakes the scheduler. */
  enqueue(request: EnqueueRequest): EnqueueResult;
  /** Resumes unfinished runs and starts picking up new ones. */
  start(): void;
  /** Stops picking up runs, lets in-flight steps finish (bounded), and releases the leases. */
  stop(): Promise<void>;
  get(orgId: string, runId: string): RunRecord | null;
  list(orgId: string, options?: ListOptions): Result<RunPage, ListError>;
  /** Runs of one loop created in the last `windowMs` by outcome, and the latest run. */
  loopStats(orgId: string, loopId: string, windowMs: number): LoopStats;
  terminate(orgId: string, runId: string): Result<{ status: "terminated" }, TerminateError>;
}

const MB = 1024 * 1024;
const DEFAULT_LIST_LIMIT = 20;
const MAX_LIST_LIMIT = 100;
/** How far past its timeout a step may run before the engine concludes its worker is stuck. */
const STEP_TIMEOUT_GRACE_MS = 1_000;
const WORKER_URL = new URL("./worker.ts", import.meta.url).href;

const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };

/** One run executing in a worker of this engine. */
interface ActiveRun {
  id: string;
  loopId: string;
  worker: Worker;
  settled: boolean;
  /** Stop after the current step (engine stopping). */
  draining: boolean;
  runTimer: ReturnType<typeof setTimeout>;
  /** Step-attempt deadlines that catch a worker blocked past a step's own timeout. */
  stepTimers: Map<string, ReturnType<typeof setTimeout>>;
  /** When the unanswered memory ping was sent, or null. */
  statsSentAt: number | null;
  heapBytes: number;
}

export function createEngine(options: EngineOptions): Engine {
  const store = createRunStore(options.sqlite);
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const concurrency = positiveInteger(options.concurrency ?? 4, "concurrency");
  const leaseMs = positiveInteger(options.leaseMs ?? 30_000, "leaseMs");
  const heartbeatMs = positiveInteger(options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3)), "heartbeatMs");
  const pollMs = positiveInteger(options.pollMs ?? 1_000, "pollMs");
  const runTimeoutMs = positiveInteger(options.runTimeoutMs ?? 15 * 60_000, "runTimeoutMs");
  const stopTimeoutMs = positiveInteger(options.stopTimeoutMs ?? 10_000, "stopTimeoutMs");
  const memoryLimitBytes = positiveInteger(options.memoryLimitMb ?? 512, "memoryLimitMb") * MB;
  const processLimitBytes =
    positiveInteger(
      options.processMemoryLimitMb ?? Math.min(4096, Math.floor((totalmem() / MB) * 0.75)),
      "processMemoryLimitMb",
    ) * MB;
  const memoryCheckMs = positiveInteger(options.memoryCheckMs ?? 1_000, "memoryCheckMs");
  const exclusive = options.exclusive ?? true;
  const workerEnv = options.workerEnv ?? loopEnvironment();
  const owner = newId("eng");

  const active = new Map<string, ActiveRun>();
  let running = false;
  let pumpQueued = false;
  let pollTimer: ReturnType<typeof setInterval> | undefined;
  let heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  let memoryTimer: ReturnType<typeof setInterval> | undefined;
  let wakeTimer: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;
  let lastMemoryKillAt = 0;
  /** Resolved whenever a run leaves `active`, for stop(). */
  let onSettled: (() => void) | undefined;

  function resolveLoops(): Map<string, LoopDefinition> {
    return typeof options.loops === "function" ? options.loops() : options.loops;
  }

  function enqueue(request: EnqueueRequest): EnqueueResult {
    const encoded = encodeStoredJson(request.input, "the trigger body");
    if (!encoded.ok) throw new TypeError(encoded.error);
    const runId = newId("run");
    const workflowInstanceId = newId("wfi");
    store.insertRun({
      id: runId,
      workflowInstanceId,
      orgId: request.orgId,
      loopId: request.loopId,
      input: encoded.value,
      triggerKind: request.trigger.kind,
      triggerId: request.trigger.id,
      triggerName: request.trigger.name,
      now: now(),
    });
    schedulePump();
    return { runId, workflowInstanceId };
  }

  /** Coalesces wake-ups: a burst of triggers costs one scheduling pass, after the caller's reply. */
  function schedulePump(): void {
    if (!running || pumpQueued) return;
    pumpQueued = true;
    setImmediate(guardedPump);
  }

  const guardedPump = guarded("scheduling", pump);

  function pump(): void {
    pumpQueued = false;
    if (!running) return;
    while (active.size < concurrency) {
      const claimed = store.claimNext(owner, now(), now() + leaseMs);
      if (claimed === null) break;
      // Our own run with a lease that lapsed while the event loop stalled: the claim renewed it,
      // and it is still executing here.
      if (active.has(claimed.id)) continue;
      launch(claimed.id, claimed.loopId, claimed.input);
    }
    armWakeTimer();
  }

  /**
   * The poll interval catches everything eventually; this timer makes a short sleep wake on time.
   * With every slot taken there is nothing to arm: the next run to finish triggers a pass anyway,
   * and a timer for a sleeper already due would fire again and again.
   */
  function armWakeTimer(): void {
    if (active.size >= concurrency) return;
    const wakeAt = store.nextWakeAt();
    if (wakeAt === null || (wakeTimer !== undefined && wakeTimer.at <= wakeAt)) return;
    if (wakeTimer !== undefined) clearTimeout(wakeTimer.timer);
    const timer = setTimeout(
      () => {
        wakeTimer = undefined;
        guardedPump();
      },
      Math.max(0, wakeAt - now()),
    );
    wakeTimer = { at: wakeAt, timer };
  }

  function launch(runId: string, loopId: string, input: string | null): void {
    const definition = resolveLoops().get(loopId);
    if (definition === undefined) {
      const message = `loop ${loopId} is not registered (its module was removed, renamed or failed to load)`;
      store.fail(runId, owner, now(), { name: "LoopNotFound", message });
      logger.warn("loop run failed: loop not registered", { runId, loopId });
      return;
    }
    const steps = store.storedSteps(runId, now());
    const worker = new Worker(WORKER_URL, { name: runId, env: workerEnv });
    const run: ActiveRun = {
      id: runId,
      loopId,
      worker,
      settled: false,
      draining: false,
      runTimer: setTimeout(() => safely(run, () => failRun(run, runTimeoutError())), runTimeoutMs),
      stepTimers: new Map(),
      statsSentAt: null,
      heapBytes: 0,
    };
    active.set(runId, run);
    worker.addEventListener("message", (event: MessageEvent<FromWorker>) => {
      safely(run, () => onWorkerMessage(run, event.data));
    });
    worker.addEventListener("error", (event: ErrorEvent) => {
      // The worker reports its own uncaught errors as `fatal`; this is the fallback (under
      // `bun test` the worker's process handlers never fire).
      event.preventDefault();
      safely(run, () => failRun(run, uncaughtFromErrorEvent(event.message)));
    });
    worker.addEventListener("close", (event: Event) => {
      const code = event instanceof CloseEvent ? event.code : "unknown";
      safely(run, () =>
        failRun(run, { name: "LoopCrashed", message: `the loop worker exited unexpectedly (code ${code})` }),
      );
    });
    const start: ToWorker = {
      type: "start",
      runId,
      file: definition.file,
      exportName: definition.exportName,
      input,
      steps,
    };
    worker.postMessage(start);
    logger.info("loop run started", { runId, loopId });
  }

  function onWorkerMessage(run: ActiveRun, message: FromWorker): void {
    if (run.settled) return;
    switch (message.type) {
      case "attempt":
        store.recordAttempt({
          runId: run.id,
          key: message.key,
          name: message.name,
          idx: message.idx,
          owner,
          now: now(),
          attempt: message.attempt,
        });
        if (message.timeoutMs > 0) armStepDeadline(run, message.key, message.timeoutMs);
        return;
      case "attemptFailed":
        clearStepDeadline(run, message.key);
        store.recordAttemptError(
          run.id,
          message.key,
          message.attempt,
          { name: message.errorName, message: message.errorMessage },
          now(),
        );
        return;
      case "stepDone":
        onStepDone(run, message);
        return;
      case "sleep":
        onSleep(run, message);
        return;
      case "done":
        onDone(run, message);
        return;
      case "fatal":
        failRun(run, { name: message.errorName, message: `uncaught outside a step: ${message.errorMessage}` });
        return;
      case "stats":
        run.statsSentAt = null;
        run.heapBytes = message.heapBytes;
        if (message.heapBytes > memoryLimitBytes) {
          failRun(run, {
            name: "MemoryLimitExceeded",
            message: `the loop used ${Math.round(message.heapBytes / MB)} MB of heap, over its limit of ${memoryLimitBytes / MB} MB; its worker was stopped`,
          });
        }
        return;
    }
  }

  function onStepDone(run: ActiveRun, message: Extract<FromWorker, { type: "stepDone" }>): void {
    clearStepDeadline(run, message.key);
    const error = message.errorName === null ? null : { name: message.errorName, message: message.errorMessage ?? "" };
    const persisted = store.finishStep({
      runId: run.id,
      key: message.key,
      name: message.name,
      idx: message.idx,
      owner,
      now: now(),
      status: message.status,
      result: message.result,
      error,
      attempts: message.attempts,
    });
    if (persisted) continueAfterStep(run, message.seq);
    else lostRun(run);
  }

  function onSleep(run: ActiveRun, message: Extract<FromWorker, { type: "sleep" }>): void {
    const at = now();
    const wakeAt = message.wakeAt ?? at + message.delayMs;
    const write = { runId: run.id, key: message.key, name: message.name, idx: message.idx, owner, now: at, wakeAt };
    if (wakeAt <= at) {
      if (store.completeSleep(write)) continueAfterStep(run, message.seq);
      else lostRun(run);
      return;
    }
    // The run is released: no timer or worker holds it while it sleeps, so a restart loses nothing.
    if (!store.suspend(write)) {
      lostRun(run);
      return;
    }
    logger.info("loop run sleeping", { runId: run.id, loopId: run.loopId, wakeAt: new Date(wakeAt).toISOString() });
    settle(run);
  }

  function onDone(run: ActiveRun, message: Extract<FromWorker, { type: "done" }>): void {
    if (message.status === "errored") {
      failRun(run, { name: message.errorName, message: message.errorMessage });
      return;
    }
    if (!store.complete(run.id, owner, now(), message.output)) {
      lostRun(run);
      return;
    }
    logger.info("loop run complete", { runId: run.id, loopId: run.loopId });
    settle(run);
  }

  function continueAfterStep(run: ActiveRun, seq: number): void {
    if (run.draining) {
      store.requeue(run.id, owner, now());
      settle(run);
      return;
    }
    const ack: ToWorker = { type: "ack", seq };
    run.worker.postMessage(ack);
  }

  function armStepDeadline(run: ActiveRun, key: string, timeoutMs: number): void {
    clearStepDeadline(run, key);
    const timer = setTimeout(() => {
      safely(run, () =>
        failRun(run, {
          name: "StepTimeoutError",
          message: `step "${key}" did not finish within its timeout of ${timeoutMs} ms and blocked its worker; the worker was stopped`,
        }),
      );
    }, timeoutMs + STEP_TIMEOUT_GRACE_MS);
    run.stepTimers.set(key, timer);
  }

  function clearStepDeadline(run: ActiveRun, key: string): void {
    const timer = run.stepTimers.get(key);
    if (timer === undefined) return;
    clearTimeout(timer);
    run.stepTimers.delete(key);
  }

  function failRun(run: ActiveRun, error: StoredError): void {
    if (run.settled) return;
    if (!store.fail(run.id, owner, now(), error)) {
      lostRun(run);
      return;
    }
    logger.warn("loop run errored", { runId: run.id, loopId: run.loopId, error: error.name });
    settle(run);
  }

  /**
   * Runs a handler of one run's events. If the database fails under it, the run is given back to
   * the queue (it resumes later by replay) instead of the exception reaching the event loop.
   */
  function safely(run: ActiveRun, handle: () => void): void {
    try {
      handle();
    } catch (error) {
      logger.error("loop engine: persisting a run failed; the run is requeued", {
        runId: run.id,
        error: error instanceof Error ? error.name : "unknown",
      });
      try {
        store.requeue(run.id, owner, now());
      } catch {
        // Still failing: the lease is no longer renewed, so the run is taken over once it expires.
      }
      settle(run);
    }
  }

  /** The run was terminated or taken over elsewhere: stop executing it and write nothing. */
  function lostRun(run: ActiveRun): void {
    if (run.settled) return;
    logger.info("loop run no longer owned here; stopping its worker", { runId: run.id, loopId: run.loopId });
    settle(run);
  }

  function settle(run: ActiveRun): void {
    if (run.settled) return;
    run.settled = true;
    clearTimeout(run.runTimer);
    for (const timer of run.stepTimers.values()) clearTimeout(timer);
    run.worker.terminate();
    active.delete(run.id);
    onSettled?.();
    schedulePump();
  }

  function runTimeoutError(): StoredError {
    return {
      name: "RunTimeoutError",
      message: `the run executed for longer than its limit of ${formatMs(runTimeoutMs)}; its loop worker was stopped`,
    };
  }

  /**
   * Renews only the leases of runs executing here, so a run this engine lost track of expires and
   * is taken over. A run terminated by another process (or connection) is noticed here too.
   */
  function heartbeat(): void {
    const leaseUntil = now() + leaseMs;
    for (const run of [...active.values()]) {
      if (!store.renewLease(run.id, owner, leaseUntil)) lostRun(run);
    }
  }

  /**
   * Entry points called by timers and worker events must never throw: an exception there would be
   * uncaught and could end the server. A failing database call is logged; the poll retries.
   */
  function guarded<A extends unknown[]>(what: string, fn: (...args: A) => void): (...args: A) => void {
    return function guardedCall(...args: A): void {
      try {
        fn(...args);
      } catch (error) {
        logger.error(`loop engine: ${what} failed`, { error: error instanceof Error ? error.name : "unknown" });
      }
    };
  }

  /**
   * Bun ignores Worker resourceLimits, so memory is policed from here: each worker reports its heap
   * when pinged; one that exceeds its limit is stopped. A worker stuck allocating in a synchronous
   * loop cannot answer, so when the whole process grows past its limit, the longest-silent worker
   * (or else the largest) is stopped.
   */
  function checkMemory(): void {
    if (active.size === 0) return;
    // Real time, not the injectable clock: this measures how long a worker has been silent.
    const at = Date.now();
    const rss = process.memoryUsage().rss;
    if (rss > processLimitBytes && at - lastMemoryKillAt > 2 * memoryCheckMs) {
      const victim = pickMemoryVictim(rss, at);
      if (victim !== undefined) {
        lastMemoryKillAt = at;
        safely(victim, () =>
          failRun(victim, {
            name: "MemoryLimitExceeded",
            message: `the process reached ${Math.round(rss / MB)} MB (limit ${processLimitBytes / MB} MB) while this loop was running; its worker was stopped`,
          }),
        );
        Bun.gc(false);
      } else {
        logger.warn("process memory over its limit, but no loop worker stands out", { rssMb: Math.round(rss / MB) });
      }
    }
    for (const run of active.values()) {
      if (run.statsSentAt !== null) continue;
      run.statsSentAt = at;
      const ping: ToWorker = { type: "stats" };
      run.worker.postMessage(ping);
    }
  }

  function pickMemoryVictim(rss: number, at: number): ActiveRun | undefined {
    let silent: ActiveRun | undefined;
    let largest: ActiveRun | undefined;
    for (const run of active.values()) {
      if (run.statsSentAt !== null && at - run.statsSentAt >= memoryCheckMs) {
        if (silent === undefined || (silent.statsSentAt ?? at) > run.statsSentAt) silent = run;
      }
      if (largest === undefined || run.heapBytes > largest.heapBytes) largest = run;
    }
    if (silent !== undefined) return silent;
    return largest !== undefined && largest.heapBytes > rss / 4 ? largest : undefined;
  }

  function start(): void {
    if (running) return;
    running = true;
    if (exclusive) store.expireForeignLeases(owner);
    pollTimer = setInterval(guardedPump, pollMs);
    heartbeatTimer = setInterval(guarded("heartbeat", heartbeat), heartbeatMs);
    memoryTimer = setInterval(guarded("memory check", checkMemory), memoryCheckMs);
    logger.info("loop engine started", { owner, concurrency });
    guardedPump();
  }

  async function stop(): Promise<void> {
    if (!running) return;
    running = false;
    clearInterval(pollTimer);
    clearInterval(heartbeatTimer);
    if (wakeTimer !== undefined) clearTimeout(wakeTimer.timer);
    wakeTimer = undefined;
    for (const run of active.values()) run.draining = true;
    const deadline = Date.now() + stopTimeoutMs;
    while (active.size > 0 && Date.now() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        onSettled = resolve;
        timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      });
      clearTimeout(timer);
    }
    onSettled = undefined;
    // Steps still in flight are abandoned; their runs resume by replay on the next start.
    for (const run of [...active.values()]) {
      store.requeue(run.id, owner, now());
      settle(run);
    }
    clearInterval(memoryTimer);
    logger.info("loop engine stopped", { owner });
  }

  function get(orgId: string, runId: string): RunRecord | null {
    const row = store.getRun(orgId, runId);
    if (row === null) return null;
    const attempts = Map.groupBy(store.getAttempts(runId), (attempt) => attempt.key);
    return {
      ...toSummary(row),
      steps: store.getSteps(runId).map((step) => toStepRecord(step, attempts.get(step.key) ?? [])),
    };
  }

  function list(orgId: string, listOptions: ListOptions = {}): Result<RunPage, ListError> {
    const limit = Math.min(MAX_LIST_LIMIT, Math.max(1, Math.floor(listOptions.limit ?? DEFAULT_LIST_LIMIT)));
    let after: { createdAt: number; rowid: number } | undefined;
    if (listOptions.cursor !== undefined) {
      const decoded = decodeCursor(listOptions.cursor);
      if (decoded === null)
        return { ok: false, error: { code: "invalid_cursor", message: "the cursor is not one this server issued" } };
      after = decoded;
    }
    // One extra row tells whether there is a next page without a COUNT.
    const rows = store.list({ orgId, loopId: listOptions.loopId, status: listOptions.status, limit: limit + 1, after });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const nextCursor = rows.length > limit && last !== undefined ? encodeCursor(last) : null;
    return { ok: true, value: { runs: page.map(toSummary), nextCursor } };
  }

  function loopStats(orgId: string, loopId: string, windowMs: number): LoopStats {
    const { lastStatus, lastCreatedAt, ...counts } = store.loopStats(orgId, loopId, now() - windowMs);
    const lastRun =
      lastStatus === null || lastCreatedAt === null ? null : { status: lastStatus, createdAt: iso(lastCreatedAt) };
    return { ...counts, lastRun };
  }

  function terminate(orgId: string, runId: string): Result<{ status: "terminated" }, TerminateError> {
    if (store.terminate(orgId, runId, now())) {
      const run = active.get(runId);
      if (run !== undefined) settle(run);
      logger.info("loop run terminated", { runId });
      return { ok: true, value: { status: "terminated" } };
    }
    const row = store.getRun(orgId, runId);
    if (row === null)
      return { ok: false, error: { code: "not_found", message: `no run ${runId} in this organization` } };
    return {
      ok: false,
      error: { code: "already_finished", message: `run ${runId} already finished (${row.status})`, status: row.status },
    };
  }

  return {
    id: owner,
    get activeCount() {
      return active.size;
    },
    enqueue,
    start,
    stop,
    get,
    list,
    loopStats,
    terminate,
  };
}

function toSummary(row: RunRow): RunSummary {
  return {
    id: row.id,
    workflowInstanceId: row.workflowInstanceId,
    loopId: row.loopId,
    orgId: row.orgId,
    status: row.status,
    input: decodeStoredJson(row.input),
    output: decodeStoredJson(row.output),
    error: parseStoredError(row.error),
    trigger: { kind: row.triggerKind, id: row.triggerId, name: row.triggerName },
    attempts: row.attempts,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    startedAt: isoOrNull(row.startedAt),
    finishedAt: isoOrNull(row.finishedAt),
    wakeAt: isoOrNull(row.wakeAt),
  };
}

function toStepRecord(row: StepRow, attempts: AttemptRow[]): RunStepRecord {
  return {
    name: row.name,
    key: row.key,
    index: row.idx,
    kind: row.kind,
    status: row.status,
    attempts: row.attempts,
    attemptLog: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      status: attempt.status,
      error: parseStoredError(attempt.error),
      startedAt: iso(attempt.startedAt),
      finishedAt: isoOrNull(attempt.finishedAt),
    })),
    result: decodeStoredJson(row.result),
    error: parseStoredError(row.error),
    startedAt: iso(row.startedAt),
    finishedAt: isoOrNull(row.finishedAt),
    wakeAt: isoOrNull(row.wakeAt),
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

/** Opaque to clients: base64url of "createdAt.rowid" of the last run on the page. */
function encodeCursor(row: RunRow): string {
  return Buffer.from(`${row.createdAt}.${row.rowid}`).toString("base64url");
}

function decodeCursor(cursor: string): { createdAt: number; rowid: number } | null {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (match === null) return null;
  return { createdAt: Number(match[1]), rowid: Number(match[2]) };
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/** Bun's message for a worker error embeds source lines and a stack: keep the error line only. */
function uncaughtFromErrorEvent(message: string): StoredError {
  const lines = message.split("\n").map((line) => line.trim());
  for (let i = lines.length - 1; i >= 0; i--) {
    const match = /^([A-Za-z]*Error|error): (.*)$/.exec(lines[i] ?? "");
    if (match !== null) {
      const name = match[1] === "error" || match[1] === undefined ? "Error" : match[1];
      return { name, message: `uncaught outside a step: ${match[2] ?? ""}` };
    }
  }
  return { name: "LoopCrashed", message: "the loop worker failed with an uncaught error" };
}

function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} hour${ms === 3_600_000 ? "" : "s"}`;
  if (ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`;
  if (ms % 1_000 === 0) return `${ms / 1_000} second${ms === 1_000 ? "" : "s"}`;
  return `${ms} ms`;
}
