/**
 * Executing claimed runs: placing each on a loop thread, persisting what its steps report before
 * the run may go on, and ending it (complete, errored, asleep, given back) exactly once.
 *
 * When a thread fails (blocked, out of memory, crashed), the runs on it are suspects. A run the
 * engine already knows to be at fault (its step or run deadline passed while the thread stopped
 * answering) is errored and the others resume elsewhere by replay. Otherwise the suspects are split
 * over dedicated threads, the run the thread last entered alone on one of them: a thread that
 * fails again narrows the group, and a run that fails a thread on its own is the culprit. Innocent
 * runs resume from their last completed step each time, so no completed step runs twice.
 *
 * The store answers with promises (either dialect). What one run reports is persisted in order:
 * each run has a chain of promises, and every handler of its events (thread messages, deadlines,
 * its start) is a link, so a write starts after the previous one committed, and a reply to the
 * thread is posted only after the write it acknowledges. A link that fails gives the run back to
 * the queue; nothing rejects unhandled. `idle()` resolves when no write is in flight.
 */
import type { AsyncClaims } from "./claims.ts";
import type { EngineLogger } from "./engine.ts";
import type { LoopPool, LoopThread, ThreadFailure } from "./pool.ts";
import type { FromThread, StoredError } from "./protocol.ts";
import type { LoopDefinition } from "./registry.ts";
import type { ClaimedRun, RunStore, StepWrite } from "./store.ts";

/** How long past a step's own timeout the engine waits before it concludes the thread is stuck. */
const STEP_TIMEOUT_GRACE_MS = 1_000;
/** How long a thread suspected of being stuck gets to answer before it is replaced. */
const PROBE_MS = 500;
/** Runs abandoned in a thread (their code may still be running) before it is retired. */
const MAX_ABANDONED_PER_THREAD = 32;

export interface RunnerOptions {
  store: RunStore;
  claims: AsyncClaims;
  pool: LoopPool;
  owner: string;
  now: () => number;
  logger: EngineLogger;
  loops: () => Map<string, LoopDefinition>;
  runTimeoutMs: number;
  /** Called whenever a run leaves, so its capacity can be claimed again. */
  onSettled: () => void;
  /** Told when this engine ends a run, for usage figures. */
  onRunEnded?: (run: RunEnded) => void;
}

/** A run this engine finished: who it belongs to, how it ended, and how long since it was queued. */
export interface RunEnded {
  runId: string;
  orgId: string;
  loopId: string;
  /** When it was queued, and the trace it belongs to (ClaimedRun). */
  createdAt: number;
  traceparent: string | null;
  trigger: Pick<ClaimedRun, "triggerKind" | "triggerId">;
  status: "complete" | "errored";
  durationMs: number;
}

interface ActiveRun {
  id: string;
  orgId: string;
  loopId: string;
  input: string | null;
  claim: ClaimedRun;
  thread: LoopThread;
  slot: number;
  /** When it was launched here, in launches (`launches`): a heartbeat only judges runs it saw. */
  launch: number;
  settled: boolean;
  /** Stop after the current step (engine stopping). */
  draining: boolean;
  runTimer: ReturnType<typeof setTimeout>;
  /** Deadlines of step attempts in flight: past them, the thread is checked for being stuck. */
  stepTimers: Map<string, ReturnType<typeof setTimeout>>;
  /** The last link of this run's chain: its events are handled one after the other. */
  chain: Promise<void>;
}

export function createRunner(options: RunnerOptions) {
  const { store, pool, owner, now, logger } = options;
  const active = new Map<string, ActiveRun>();
  /** Chains with a link not yet settled, for idle(). */
  const inFlight = new Set<Promise<void>>();
  let nextSlot = 1;
  /** Runs launched since start (relaunches included). */
  let launches = 0;
  /** Since start, for metrics: step attempts that failed and were retried, runs ended by status, threads lost. */
  const counts = {
    stepsRetried: 0,
    runsEnded: { complete: 0, errored: 0 } as Record<"complete" | "errored", number>,
    threadFailures: { blocked: 0, memory: 0, "process-memory": 0, crashed: 0 } as Record<ThreadFailure["kind"], number>,
  };

  function ended(claim: ClaimedRun, status: RunEnded["status"]): void {
    const durationMs = Math.max(0, now() - claim.createdAt);
    try {
      options.onRunEnded?.({
        runId: claim.id,
        orgId: claim.orgId,
        loopId: claim.loopId,
        createdAt: claim.createdAt,
        traceparent: claim.traceparent,
        trigger: claim,
        status,
        durationMs,
      });
    } catch (error) {
      logger.error("run-ended listener failed", { runId: claim.id, error: String(error) });
    }
  }

  /** Follows `work` to its end for idle(); it never rejects (every link catches). */
  function track(work: Promise<void>): Promise<void> {
    inFlight.add(work);
    const done = () => {
      inFlight.delete(work);
    };
    work.then(done, done);
    return work;
  }

  /**
   * Starts a claimed run on `onThread` or a shared thread. `after`: the chain of a previous
   * execution of the same run (relaunch), whose writes must commit before its steps are read.
   */
  function launch(claim: ClaimedRun, onThread?: LoopThread, after?: Promise<void>): void {
    const definition = options.loops().get(claim.loopId);
    if (definition === undefined) {
      const message = `loop ${claim.loopId} is not registered (its module was removed, renamed or failed to load)`;
      track(
        (async () => {
          await after;
          try {
            if (await store.fail(claim.id, owner, now(), { name: "LoopNotFound", message })) ended(claim, "errored");
          } catch (error) {
            logger.error("loop engine: persisting a run failed; its lease will lapse", {
              runId: claim.id,
              error: error instanceof Error ? error.name : "unknown",
            });
          }
          logger.warn("loop run failed: loop not registered", { runId: claim.id, loopId: claim.loopId });
          options.onSettled();
        })(),
      );
      return;
    }
    const thread = onThread ?? pool.pick();
    const run: ActiveRun = {
      id: claim.id,
      orgId: claim.orgId,
      loopId: claim.loopId,
      input: claim.input,
      claim,
      thread,
      slot: nextSlot++,
      launch: ++launches,
      settled: false,
      draining: false,
      runTimer: setTimeout(() => safely(run, () => onRunTimeout(run)), options.runTimeoutMs),
      stepTimers: new Map(),
      chain: after ?? Promise.resolve(),
    };
    if (nextSlot > 2 ** 30) nextSlot = 1;
    active.set(run.id, run);
    thread.runs.add(run.id);
    safely(run, async () => {
      const steps = await store.storedSteps(run.id, now());
      if (run.settled) return;
      thread.post({
        type: "start",
        runId: run.id,
        slot: run.slot,
        file: definition.file,
        exportName: definition.exportName,
        input: claim.input,
        steps,
      });
      logger.info("loop run started", { runId: run.id, loopId: run.loopId, thread: thread.id });
    });
  }

  function onMessage(thread: LoopThread, message: FromThread): void {
    if (message.type === "pong") return;
    if (message.type === "stray") {
      logger.warn("a loop threw outside any run it could be charged to", {
        thread: thread.id,
        error: message.errorName,
      });
      return;
    }
    const run = active.get(message.runId);
    if (run === undefined || run.settled || run.thread !== thread) return;
    safely(run, () => handle(run, message));
  }

  /**
   * One message of a run, its writes committed before it answers. After each await the run may
   * have left (terminated, its thread failed, the engine stopping): then nothing is posted.
   */
  async function handle(run: ActiveRun, message: Exclude<FromThread, { type: "pong" | "stray" }>): Promise<void> {
    if (run.settled) return;
    switch (message.type) {
      case "attempt": {
        const owned = await store.recordAttempt({ ...stepWrite(run, message), attempt: message.attempt });
        if (!owned) {
          lostRun(run);
          break;
        }
        if (run.settled) break;
        if (message.timeoutMs > 0) armStepDeadline(run, message.key, message.timeoutMs);
        run.thread.post({ type: "ack", seq: message.seq });
        break;
      }
      case "attemptFailed":
        counts.stepsRetried += 1;
        clearStepDeadline(run, message.key);
        await store.recordAttemptError(
          run.id,
          message.key,
          message.attempt,
          { name: message.errorName, message: message.errorMessage },
          now(),
        );
        break;
      case "stepDone": {
        clearStepDeadline(run, message.key);
        const error =
          message.errorName === null ? null : { name: message.errorName, message: message.errorMessage ?? "" };
        const persisted = await store.finishStep({
          ...stepWrite(run, message),
          status: message.status,
          result: message.result,
          error,
          attempts: message.attempts,
        });
        if (persisted) await continueAfterStep(run, message.seq);
        else lostRun(run);
        break;
      }
      case "sleep":
        await onSleep(run, message);
        break;
      case "done":
        if (message.status === "errored")
          await failRun(run, { name: message.errorName, message: message.errorMessage });
        else if (!(await store.complete(run.id, owner, now(), message.output))) lostRun(run);
        else {
          counts.runsEnded.complete += 1;
          ended(run.claim, "complete");
          logger.info("loop run complete", { runId: run.id, loopId: run.loopId });
          abandon(run);
        }
        break;
      case "fatal":
        await failRun(
          run,
          { name: message.errorName, message: `uncaught outside a step: ${message.errorMessage}` },
          true,
        );
        break;
    }
  }

  /** Which step of which run, written under this engine's lease, now. */
  function stepWrite(run: ActiveRun, message: { key: string; name: string; idx: number }): StepWrite {
    return { runId: run.id, key: message.key, name: message.name, idx: message.idx, owner, now: now() };
  }

  async function onSleep(run: ActiveRun, message: Extract<FromThread, { type: "sleep" }>): Promise<void> {
    const step = stepWrite(run, message);
    const wakeAt = message.wakeAt ?? step.now + message.delayMs;
    const write = { ...step, wakeAt };
    if (wakeAt <= step.now) {
      if (await store.completeSleep(write)) await continueAfterStep(run, message.seq);
      else lostRun(run);
      return;
    }
    // Released: a sleeping run costs a row and the engine's one wake timer, no thread, no slot.
    if (!(await store.suspend(write))) {
      lostRun(run);
      return;
    }
    logger.info("loop run sleeping", { runId: run.id, loopId: run.loopId, wakeAt: new Date(wakeAt).toISOString() });
    abandon(run);
  }

  async function continueAfterStep(run: ActiveRun, seq: number): Promise<void> {
    if (run.settled) return;
    if (run.draining) {
      await store.requeue(run.id, owner, now());
      abandon(run);
      return;
    }
    run.thread.post({ type: "ack", seq });
  }

  function armStepDeadline(run: ActiveRun, key: string, timeoutMs: number): void {
    clearStepDeadline(run, key);
    const timer = setTimeout(() => {
      // The thread enforces the timeout itself; getting here means it has not run since.
      safely(run, () =>
        convict(run, {
          name: "StepTimeoutError",
          message: `step "${key}" did not finish within its timeout of ${timeoutMs} ms and blocked its thread; the thread was replaced`,
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

  function onRunTimeout(run: ActiveRun): Promise<void> {
    return convict(run, {
      name: "RunTimeoutError",
      message: `the run executed for longer than its limit of ${formatMs(options.runTimeoutMs)}; it was stopped`,
    });
  }

  /**
   * Errors a run the engine caught at fault, then checks its thread: one still answering just
   * drops the run (its code, if still going, stops at its next step); one that does not answer is
   * stuck in this run's code and is replaced, its other runs resuming elsewhere.
   */
  async function convict(run: ActiveRun, error: StoredError): Promise<void> {
    if (run.settled) return;
    const thread = run.thread;
    await failRun(run, error, true);
    if (await pool.answers(thread, PROBE_MS)) return;
    logger.warn("loop thread stuck; replacing it", { thread: thread.id, runId: run.id });
    pool.close(thread);
    moveAll(thread, "a run that blocked its thread");
  }

  /** The thread failed on its own (watchdog, memory, crash): find the run at fault. */
  function onThreadFailure(thread: LoopThread, failure: ThreadFailure): void {
    counts.threadFailures[failure.kind] += 1;
    const suspects = [...thread.runs].flatMap((id) => {
      const run = active.get(id);
      return run === undefined || run.settled ? [] : [run];
    });
    logger.warn("loop thread failed", {
      thread: thread.id,
      failure: failure.kind,
      runs: suspects.length,
      dedicated: thread.dedicated,
    });
    if (suspects.length === 0) return;
    const [only] = suspects;
    if (suspects.length === 1 && only !== undefined) {
      safely(only, () => failRun(only, culpritError(failure)));
      return;
    }
    // Split: the run the thread last entered alone, the others in two halves, each on a thread of
    // its own. Whichever fails again has the culprit; a lone run that fails is it.
    const entered = thread.lastEntered();
    const prime = suspects.find((run) => run.slot === entered);
    const rest = suspects.filter((run) => run !== prime);
    const half = Math.ceil(rest.length / 2);
    const groups = [prime === undefined ? [] : [prime], rest.slice(0, half), rest.slice(half)].filter(
      (group) => group.length > 0,
    );
    for (const group of groups) {
      const dedicated = pool.dedicated();
      for (const run of group) relaunch(run, dedicated);
    }
  }

  /** The innocent runs of a thread replaced for a known culprit go back to the shared threads. */
  function moveAll(thread: LoopThread, why: string): void {
    for (const id of [...thread.runs]) {
      const run = active.get(id);
      if (run === undefined || run.settled) continue;
      logger.info("loop run resumes on another thread", { runId: run.id, why });
      relaunch(run);
    }
  }

  /**
   * Starts a run again from its stored steps, on `thread` or a shared one. Its lease is kept. The
   * new execution reads its steps once the old one's writes have committed.
   */
  function relaunch(run: ActiveRun, thread?: LoopThread): void {
    detach(run);
    launch(run.claim, thread, run.chain);
  }

  function culpritError(failure: ThreadFailure): StoredError {
    switch (failure.kind) {
      case "blocked":
        return {
          name: "LoopBlockedError",
          message: `the loop kept its thread busy for ${formatMs(failure.silentMs)} without yielding (synchronous code that never ends?); the thread was replaced`,
        };
      case "memory":
        return {
          name: "MemoryLimitExceeded",
          message: `the loop used ${failure.heapMb} MB of heap, over its thread's limit of ${failure.limitMb} MB; the thread was replaced`,
        };
      case "process-memory":
        return {
          name: "MemoryLimitExceeded",
          message: `the process reached ${failure.rssMb} MB (limit ${failure.limitMb} MB) while this loop was running; its thread was replaced`,
        };
      case "crashed":
        return { name: "LoopCrashed", message: `the loop's thread ended: ${failure.reason}` };
    }
  }

  /** `cutShort`: the run's code may still be going (see abandon). */
  async function failRun(run: ActiveRun, error: StoredError, cutShort = false): Promise<void> {
    if (run.settled) return;
    if (!(await store.fail(run.id, owner, now(), error))) {
      lostRun(run);
      return;
    }
    counts.runsEnded.errored += 1;
    ended(run.claim, "errored");
    logger.warn("loop run errored", { runId: run.id, loopId: run.loopId, error: error.name });
    abandon(run, cutShort);
  }

  /** The run was terminated or taken over elsewhere: stop executing it and write nothing. */
  function lostRun(run: ActiveRun): void {
    if (run.settled) return;
    logger.info("loop run no longer owned here; dropping it", { runId: run.id, loopId: run.loopId });
    abandon(run, true);
  }

  /**
   * Adds a handler of one run's events to the run's chain: it starts once the previous one ended.
   * If the database fails under it, the run is given back to the queue (it resumes later by
   * replay) instead of the rejection reaching the event loop.
   */
  function safely(run: ActiveRun, work: () => Promise<void> | void): void {
    run.chain = track(
      run.chain.then(work).catch(async (error: unknown) => {
        logger.error("loop engine: persisting a run failed; the run is requeued", {
          runId: run.id,
          error: error instanceof Error ? error.name : "unknown",
        });
        try {
          await store.requeue(run.id, owner, now());
        } catch {
          // Still failing: the lease is no longer renewed, so the run is taken over once it expires.
        }
        abandon(run);
      }),
    );
  }

  function detach(run: ActiveRun): void {
    run.settled = true;
    clearTimeout(run.runTimer);
    for (const timer of run.stepTimers.values()) clearTimeout(timer);
    run.stepTimers.clear();
    active.delete(run.id);
    run.thread.runs.delete(run.id);
  }

  /**
   * The run leaves this engine and its thread drops it. `cutShort`: its code may still be going
   * (timed out, lost, or a callback threw); a thread where too many such runs linger is retired.
   */
  function abandon(run: ActiveRun, cutShort = false): void {
    if (run.settled) return;
    detach(run);
    const thread = run.thread;
    thread.post({ type: "abandon", runId: run.id });
    if (cutShort && ++thread.abandoned > MAX_ABANDONED_PER_THREAD) thread.retiring = true;
    pool.released(thread);
    options.onSettled();
  }

  /**
   * Called by the heartbeat with the runs this engine still holds, as its renewal read them.
   * `launched`: `launches` when the renewal started. The renewal is a promise, and claims may
   * commit while it is under way: a run launched after it started is not judged by it, and with
   * `claimsOverlapped` (a claim pass ran meanwhile) a held run not executing here may be one being
   * launched, so none is released this time (the next heartbeat does it).
   */
  function reconcile(held: Set<string>, launched: number, claimsOverlapped: boolean): void {
    for (const run of [...active.values()]) if (run.launch <= launched && !held.has(run.id)) lostRun(run);
    if (claimsOverlapped) return;
    // Held but not executing here (it fell through the cracks): let another claim take it.
    for (const id of held) {
      if (active.has(id)) continue;
      track(
        options.claims.release(id, owner).catch((error: unknown) => {
          logger.error("loop engine: releasing a lease failed; it will lapse", {
            runId: id,
            error: error instanceof Error ? error.name : "unknown",
          });
        }),
      );
    }
  }

  return {
    launch,
    onMessage,
    onThreadFailure,
    reconcile,
    isActive: (runId: string) => active.has(runId),
    /** Runs launched so far, for reconcile(). */
    get launches() {
      return launches;
    },
    counts,
    get size() {
      return active.size;
    },
    /** Terminated through the API: stop executing it here. */
    terminated(runId: string): void {
      const run = active.get(runId);
      if (run !== undefined) abandon(run, true);
    },
    /** Engine stopping: every run stops after its current step. */
    drain(): void {
      for (const run of active.values()) run.draining = true;
    },
    /** Engine stopped: runs still executing go back to the queue and resume by replay elsewhere. */
    requeueAll(): void {
      for (const run of [...active.values()]) {
        safely(run, async () => {
          await store.requeue(run.id, owner, now());
          abandon(run);
        });
      }
    },
    /** Resolves when no write of any run is in flight (those started meanwhile included). */
    async idle(): Promise<void> {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}

function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} hour${ms === 3_600_000 ? "" : "s"}`;
  if (ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`;
  if (ms % 1_000 === 0) return `${ms / 1_000} second${ms === 1_000 ? "" : "s"}`;
  return `${ms} ms`;
}
