/**
 * The durable loop runtime, assembled. Runs are rows in SQLite or PostgreSQL (one RunStore and one
 * AsyncClaims per dialect: store.ts / store-postgres.ts, claims.ts / claims-postgres.ts, both
 * answering with promises); executing one means claiming it
 * under a lease (claims.ts, scheduler.ts), replaying its loop on one of a few loop threads that
 * each run many runs at once (pool.ts, thread.ts), and persisting each new step before the loop
 * may go on (runner.ts, step.ts). The main thread keeps the database, the leases and the
 * watchdogs, so a loop that throws, hangs (even in a synchronous `while (true)`) or allocates
 * without bound costs its own run, never the server; the other runs of its thread resume by replay.
 *
 * Lifecycle: queued → running → (sleeping → running)* → complete | errored | terminated. A run
 * stopped mid-way (engine stop, crash) goes back to the queue, or is taken over once its lease
 * expires, and resumes by replay: steps whose completion was persisted never run again.
 */
import type { Database } from "bun:sqlite";
import { availableParallelism, totalmem } from "node:os";
import type { BunSQLDatabase } from "drizzle-orm/bun-sql";
import type * as pgTables from "../../schema/pg-tables.ts";
import { newId } from "../ids.ts";
import type { Result } from "../result.ts";
import { type AsyncClaims, createAsyncClaims } from "./claims.ts";
import { createPostgresClaims } from "./claims-postgres.ts";
import { loopEnvironment } from "./environment.ts";
import { encodeStoredJson } from "./json.ts";
import { createPool } from "./pool.ts";
import {
  createQueries,
  type ListError,
  type ListOptions,
  type LoopStats,
  type RunPage,
  type RunRecord,
  type TerminateError,
  type TriggerTag,
} from "./queries.ts";
import type { LoopDefinition } from "./registry.ts";
import { createRunner, type RunEnded } from "./runner.ts";
import { createScheduler } from "./scheduler.ts";
import { createRunStore, type NewRun, type RunStore, type UnfinishedCounts } from "./store.ts";
import { createPostgresRunStore } from "./store-postgres.ts";

export type {
  ListError,
  ListOptions,
  LoopStats,
  RunPage,
  RunRecord,
  RunStepAttempt,
  RunStepRecord,
  RunSummary,
  TerminateError,
  TriggerTag,
} from "./queries.ts";
export type { NewRun, RunStatus, TriggerKind } from "./store.ts";

export interface EngineLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * Where runs live, one of: the gateway's SQLite connection (server/db.ts: WAL, busy timeout,
 * migrations applied); a PostgreSQL database (`openPostgres(url).orm`, server/db-postgres.ts,
 * migrations applied); or a store and claims of one dialect made by the caller.
 */
export type EngineDatabase =
  | { sqlite: Database; postgres?: undefined; store?: undefined; claims?: undefined }
  | { postgres: BunSQLDatabase<typeof pgTables>; sqlite?: undefined; store?: undefined; claims?: undefined }
  | { store: RunStore; claims: AsyncClaims; sqlite?: undefined; postgres?: undefined };

export type EngineOptions = EngineDatabase & EngineSettings;

export interface EngineSettings {
  /** The registered loops, or a function returning them so a reload takes effect on the next claim. */
  loops: Map<string, LoopDefinition> | (() => Map<string, LoopDefinition>);
  /** Loop threads, each running many runs. Default: one per core. */
  threads?: number;
  /** Runs this engine executes at once, over all its threads. Default 1,000. */
  concurrency?: number;
  /** Runs of one organization executing at once, over every engine on the database. Default 250. */
  orgConcurrency?: number;
  /** How long a claim lasts without a heartbeat before another engine may take the run. Default 30 s. */
  leaseMs?: number;
  /** Lease renewal interval. Default leaseMs / 3. */
  heartbeatMs?: number;
  /** Interval at which the database is checked for work another process made due. Default 1 s. */
  pollMs?: number;
  /** Wall time one execution of a run may take before it is stopped. Default 15 minutes. */
  runTimeoutMs?: number;
  /**
   * How long stop() waits for in-flight steps before giving the runs back, and then again at most
   * for the writes in flight to commit. Default 10 s.
   */
  stopTimeoutMs?: number;
  /** Heap one loop thread may use before it is replaced. Default 1,024 MB. */
  memoryLimitMb?: number;
  /** Resident size of the whole process above which the worst loop thread is replaced. Default: 75% of RAM, at most 4 GB. */
  processMemoryLimitMb?: number;
  /** Interval of the watchdog's pings. Default 1 s. */
  memoryCheckMs?: number;
  /** A loop thread that has not answered for this long is stuck, and replaced. Default 10 s. */
  blockedMs?: number;
  /**
   * `process.env` of the loop threads. Default: the server's environment without the `HEALTH_*`
   * variables, which hold the gateway's own secrets (system key, upstream API key).
   */
  workerEnv?: Record<string, string>;
  logger?: EngineLogger;
  /** Told of every run queued through this engine and every run it ends (usage rollups). */
  onRunQueued?: (run: { orgId: string; loopId: string; trigger: TriggerTag }) => void;
  onRunEnded?: (run: RunEnded) => void;
  /** Clock of the persisted times and wake-ups, for tests. Default Date.now. */
  now?: () => number;
}

export interface EnqueueRequest {
  orgId: string;
  loopId: string;
  /** event.body: any JSON value, or undefined when the trigger sent no body. */
  input: unknown;
  trigger: TriggerTag;
  /** The W3C traceparent of the request that queued the run, when it is traced. */
  traceparent?: string | undefined;
}

export interface EnqueueResult {
  runId: string;
  workflowInstanceId: string;
}

export interface EngineStats {
  stepsRetried: number;
  runsEnded: { complete: number; errored: number };
  threadFailures: { blocked: number; memory: number; "process-memory": number; crashed: number };
}

export interface Engine {
  /** This engine's lease owner id. */
  readonly id: string;
  /** Runs executing in this engine right now. */
  readonly activeCount: number;
  /** Loop threads alive right now (shared and dedicated). */
  readonly threadCount: number;
  /** Counts since this engine started, for metrics. */
  stats(): EngineStats;
  /** Unfinished runs in the database (every engine's), by status, for metrics. */
  unfinishedRuns(): Promise<UnfinishedCounts>;
  /**
   * Durably queues a run; the row is committed when this resolves. Wakes the scheduler. `persist`
   * writes the row instead of the engine's store (the trigger route commits it with its
   * Idempotency-Key record: server/routes/triggers.ts); it must write it to the same database.
   */
  enqueue(request: EnqueueRequest, persist?: (run: NewRun) => Promise<void>): Promise<EnqueueResult>;
  /** Resumes unfinished runs and starts picking up new ones; rejects if the database cannot register it. */
  start(): Promise<void>;
  /** Stops picking up runs, lets in-flight steps finish (bounded), and releases the leases. */
  stop(): Promise<void>;
  get(orgId: string, runId: string): Promise<RunRecord | null>;
  list(orgId: string, options?: ListOptions): Promise<Result<RunPage, ListError>>;
  /** Runs of one loop created in the last `windowMs` by outcome, and the latest run. */
  loopStats(orgId: string, loopId: string, windowMs: number): Promise<LoopStats>;
  terminate(orgId: string, runId: string): Promise<Result<{ status: "terminated" }, TerminateError>>;
}

const MB = 1024 * 1024;
const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };

export function createEngine(options: EngineOptions): Engine {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const threads = positiveInteger(options.threads ?? Math.max(1, availableParallelism()), "threads");
  const concurrency = positiveInteger(options.concurrency ?? 1_000, "concurrency");
  const orgConcurrency = positiveInteger(options.orgConcurrency ?? 250, "orgConcurrency");
  const leaseMs = positiveInteger(options.leaseMs ?? 30_000, "leaseMs");
  const heartbeatMs = positiveInteger(options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3)), "heartbeatMs");
  const pollMs = positiveInteger(options.pollMs ?? 1_000, "pollMs");
  const runTimeoutMs = positiveInteger(options.runTimeoutMs ?? 15 * 60_000, "runTimeoutMs");
  const stopTimeoutMs = positiveInteger(options.stopTimeoutMs ?? 10_000, "stopTimeoutMs");
  const memoryLimitMb = positiveInteger(options.memoryLimitMb ?? 1_024, "memoryLimitMb");
  const processMemoryLimitMb = positiveInteger(
    options.processMemoryLimitMb ?? Math.min(4096, Math.floor((totalmem() / MB) * 0.75)),
    "processMemoryLimitMb",
  );
  const checkMs = positiveInteger(options.memoryCheckMs ?? 1_000, "memoryCheckMs");
  const blockedMs = positiveInteger(options.blockedMs ?? 10_000, "blockedMs");
  const owner = newId("eng");
  const resolveLoops = () => (typeof options.loops === "function" ? options.loops() : options.loops);

  const { store, claims } = storeAndClaims(options);
  const queries = createQueries(store, now);
  let settledWaiter: (() => void) | undefined;
  const pool = createPool({
    size: threads,
    env: options.workerEnv ?? loopEnvironment(),
    memoryLimitMb,
    processMemoryLimitMb,
    blockedMs,
    checkMs,
    onMessage: (thread, message) => runner.onMessage(thread, message),
    onFailure: (thread, failure) => guarded("thread failure", () => runner.onThreadFailure(thread, failure)),
  });
  const runner = createRunner({
    store,
    claims,
    pool,
    owner,
    now,
    logger,
    loops: resolveLoops,
    runTimeoutMs,
    ...(options.onRunEnded === undefined ? {} : { onRunEnded: options.onRunEnded }),
    onSettled: () => {
      settledWaiter?.();
      scheduler.wake();
    },
  });
  const scheduler = createScheduler({
    claims,
    owner,
    now,
    logger,
    leaseMs,
    pollMs,
    capacity: concurrency,
    perOrg: orgConcurrency,
    perLoop: (loopId) => resolveLoops().get(loopId)?.concurrency,
    inFlight: () => runner.size,
    isActive: runner.isActive,
    launch: (claim) => runner.launch(claim),
  });
  let running = false;
  let heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  /** The renewal in progress: heartbeats never overlap, and stop() waits for the last one. */
  let beating: Promise<void> | undefined;

  /** Timers and thread events must never throw: that would be uncaught and could end the server. */
  function guarded(what: string, work: () => void): void {
    try {
      work();
    } catch (error) {
      logger.error(`loop engine: ${what} failed`, { error: error instanceof Error ? error.name : "unknown" });
    }
  }

  /**
   * Extends this engine's leases; runs terminated or taken over meanwhile are dropped here. A
   * renewal still going when the next is due (a slow database) makes that one skip.
   */
  function heartbeat(): void {
    if (beating !== undefined) return;
    const at = now();
    const launched = runner.launches;
    const passes = scheduler.passes;
    const passing = scheduler.passing;
    beating = claims
      .renew(owner, at, at + leaseMs)
      .then((held) => {
        if (running) runner.reconcile(held, launched, passing || scheduler.passes !== passes);
      })
      .catch((error: unknown) => {
        logger.error("loop engine: heartbeat failed", { error: error instanceof Error ? error.name : "unknown" });
      })
      .finally(() => {
        beating = undefined;
      });
  }

  return {
    id: owner,
    get activeCount() {
      return runner.size;
    },
    get threadCount() {
      return pool.threads.length;
    },
    stats: () => runner.counts,
    unfinishedRuns: () => store.unfinishedCounts(),

    async enqueue(request, persist = store.insertRun) {
      const encoded = encodeStoredJson(request.input, "the trigger body");
      if (!encoded.ok) throw new TypeError(encoded.error);
      const runId = newId("run");
      const workflowInstanceId = newId("wfi");
      await persist({
        id: runId,
        workflowInstanceId,
        orgId: request.orgId,
        loopId: request.loopId,
        input: encoded.value,
        triggerKind: request.trigger.kind,
        triggerId: request.trigger.id,
        triggerName: request.trigger.name,
        traceparent: request.traceparent,
        now: now(),
      });
      // The run is committed: a failing listener (usage figures) must not fail the trigger.
      guarded("run-queued listener", () =>
        options.onRunQueued?.({ orgId: request.orgId, loopId: request.loopId, trigger: request.trigger }),
      );
      scheduler.wake();
      return { runId, workflowInstanceId };
    },

    async start() {
      if (running) return;
      running = true;
      let revived: number;
      try {
        revived = await claims.register(owner, now(), leaseMs);
      } catch (error) {
        running = false;
        throw error;
      }
      if (revived > 0) logger.info("resuming the runs of engines that are gone", { engines: revived });
      pool.start();
      heartbeatTimer = setInterval(() => guarded("heartbeat", heartbeat), heartbeatMs);
      logger.info("loop engine started", { owner, threads, concurrency, orgConcurrency });
      scheduler.start();
    },

    async stop() {
      if (!running) return;
      running = false;
      clearInterval(heartbeatTimer);
      // A pass in progress launches what it claimed before the runs are drained.
      await scheduler.stop();
      await beating;
      runner.drain();
      const deadline = Date.now() + stopTimeoutMs;
      while (runner.size > 0 && Date.now() < deadline) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((resolve) => {
          settledWaiter = resolve;
          timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        });
        clearTimeout(timer);
      }
      settledWaiter = undefined;
      // Steps still in flight are abandoned; their runs resume by replay on the next start.
      runner.requeueAll();
      // Every write in flight commits (or fails) before the threads go; bounded, for a database
      // that stopped answering: those runs' leases then lapse and another engine takes them over.
      if (!(await within(runner.idle(), stopTimeoutMs))) {
        logger.error("loop engine: writes still in flight at stop; their runs resume once their leases lapse");
      }
      pool.stop();
      try {
        await claims.unregister(owner);
      } catch (error) {
        logger.error("loop engine: stop failed", { error: error instanceof Error ? error.name : "unknown" });
      }
      logger.info("loop engine stopped", { owner });
    },

    get: queries.get,
    list: queries.list,
    loopStats: queries.loopStats,

    async terminate(orgId, runId) {
      const outcome = await queries.terminate(orgId, runId);
      if (outcome.ok) {
        runner.terminated(runId);
        logger.info("loop run terminated", { runId });
      }
      return outcome;
    },
  };
}

/** Whether `work` settled within `ms`. */
async function within(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

function storeAndClaims(database: EngineDatabase): { store: RunStore; claims: AsyncClaims } {
  if (database.sqlite !== undefined)
    return { store: createRunStore(database.sqlite), claims: createAsyncClaims(database.sqlite) };
  if (database.postgres !== undefined)
    return { store: createPostgresRunStore(database.postgres), claims: createPostgresClaims(database.postgres) };
  return { store: database.store, claims: database.claims };
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
