/**
 * The loop threads and their supervisor. A few threads (about one per core) each run many runs;
 * the supervisor pings every thread, and reports one that stops answering (a loop blocking its
 * event loop), grows past its heap budget, or dies. What to do about the runs on it is the
 * runner's business (runner.ts); this file only keeps threads alive and healthy.
 *
 * Besides the shared threads there are dedicated ones: the runner moves the suspects of a failed
 * thread to threads of their own to find which run was at fault (see runner.ts). A dedicated
 * thread takes no other run and is closed when its last run leaves.
 */
import type { FromThread, ToThread } from "./protocol.ts";

const THREAD_URL = new URL("./thread.ts", import.meta.url).href;
const MB = 1024 * 1024;

export interface LoopThread {
  readonly id: number;
  /** Runs placed here, by id. */
  readonly runs: Set<string>;
  /** Set for a thread kept for a group of suspects; it takes no other run. */
  readonly dedicated: boolean;
  /** Draining: takes no new run, closed when empty (after runs were abandoned in it). */
  retiring: boolean;
  /** Runs abandoned here whose code may still be running (timeouts); too many retire the thread. */
  abandoned: number;
  heapBytes: number;
  /** The slot of the run whose code the thread last entered (0: none yet). */
  lastEntered(): number;
  post(message: ToThread): void;
}

export type ThreadFailure =
  | { kind: "blocked"; silentMs: number }
  | { kind: "memory"; heapMb: number; limitMb: number }
  | { kind: "process-memory"; rssMb: number; limitMb: number }
  | { kind: "crashed"; reason: string };

export interface PoolOptions {
  /** Shared threads. */
  size: number;
  /** `process.env` of the threads. */
  env: Record<string, string>;
  /** Heap one thread may use before it is replaced. */
  memoryLimitMb: number;
  /** Resident size of the whole process above which the largest (or silent) thread is replaced. */
  processMemoryLimitMb: number;
  /** A thread that has not answered a ping for this long is blocked. */
  blockedMs: number;
  /** Ping interval. */
  checkMs: number;
  onMessage(thread: LoopThread, message: FromThread): void;
  /** A thread failed; it is already terminated and forgotten when this is called. */
  onFailure(thread: LoopThread, failure: ThreadFailure): void;
}

interface ThreadState extends LoopThread {
  worker: Worker;
  entered: Int32Array;
  /** When the unanswered ping was sent, or null. */
  pingSentAt: number | null;
  /** Called at the next pong (see answers()). */
  waiters: Array<() => void>;
  closed: boolean;
}

export interface LoopPool {
  /** The least busy shared thread (replacing any that went away). */
  pick(): LoopThread;
  /** A new thread of its own, for suspects. */
  dedicated(): LoopThread;
  /** Call when a thread's run count dropped: closes retiring and dedicated threads left empty. */
  released(thread: LoopThread): void;
  /** Terminates a thread now (its runs are the caller's to handle). */
  close(thread: LoopThread): void;
  /** Whether the thread answers a ping within `timeoutMs` (a closed thread counts as answering). */
  answers(thread: LoopThread, timeoutMs: number): Promise<boolean>;
  readonly threads: readonly LoopThread[];
  start(): void;
  stop(): void;
}

export function createPool(options: PoolOptions): LoopPool {
  const threads = new Map<number, ThreadState>();
  let nextId = 1;
  let pingId = 1;
  let timer: ReturnType<typeof setInterval> | undefined;
  let lastProcessVictimAt = 0;

  function spawn(dedicated: boolean): ThreadState {
    const id = nextId++;
    const worker = new Worker(THREAD_URL, { name: `loop-thread-${id}`, env: options.env });
    const shared = new SharedArrayBuffer(4);
    const state: ThreadState = {
      id,
      runs: new Set(),
      dedicated,
      retiring: false,
      abandoned: 0,
      heapBytes: 0,
      worker,
      entered: new Int32Array(shared),
      pingSentAt: null,
      waiters: [],
      closed: false,
      lastEntered: () => Atomics.load(state.entered, 0),
      post: (message) => {
        if (!state.closed) worker.postMessage(message);
      },
    };
    worker.addEventListener("message", (event: MessageEvent<FromThread>) => {
      if (state.closed) return;
      const message = event.data;
      if (message.type === "pong") {
        state.pingSentAt = null;
        state.heapBytes = message.heapBytes;
        for (const waiter of state.waiters.splice(0)) waiter();
        if (message.heapBytes > options.memoryLimitMb * MB) {
          fail(state, { kind: "memory", heapMb: Math.round(message.heapBytes / MB), limitMb: options.memoryLimitMb });
        }
        return;
      }
      options.onMessage(state, message);
    });
    worker.addEventListener("error", (event: ErrorEvent) => {
      event.preventDefault();
      fail(state, { kind: "crashed", reason: event.message || "an uncaught error" });
    });
    worker.addEventListener("close", (event: Event) => {
      const code = event instanceof CloseEvent ? event.code : "unknown";
      fail(state, { kind: "crashed", reason: `the thread exited (code ${code})` });
    });
    worker.postMessage({ type: "init", current: shared } satisfies ToThread);
    threads.set(id, state);
    return state;
  }

  function terminate(state: ThreadState): void {
    if (state.closed) return;
    state.closed = true;
    threads.delete(state.id);
    state.worker.terminate();
  }

  function fail(state: ThreadState, failure: ThreadFailure): void {
    if (state.closed) return;
    terminate(state);
    options.onFailure(state, failure);
  }

  function shared(): ThreadState[] {
    return [...threads.values()].filter((thread) => !thread.dedicated && !thread.retiring);
  }

  function pick(): LoopThread {
    const candidates = shared();
    // Keep the pool at its size: threads that failed or retired are replaced on demand.
    if (candidates.length < options.size) return spawn(false);
    let best = candidates[0] as ThreadState;
    for (const thread of candidates) if (thread.runs.size < best.runs.size) best = thread;
    return best;
  }

  /**
   * Pings every thread; one that let a ping go unanswered for `blockedMs` is stuck in synchronous
   * code. Bun ignores a Worker's resourceLimits, so heap is policed from the answers, and a
   * process growing past its limit while a thread is silent (allocating in a tight loop) costs
   * that thread.
   */
  function check(): void {
    const at = Date.now();
    for (const thread of [...threads.values()]) {
      if (thread.pingSentAt !== null && at - thread.pingSentAt >= options.blockedMs) {
        fail(thread, { kind: "blocked", silentMs: at - thread.pingSentAt });
      }
    }
    const rss = process.memoryUsage().rss;
    if (rss > options.processMemoryLimitMb * MB && at - lastProcessVictimAt > 2 * options.checkMs) {
      const victim = processVictim(at, rss);
      if (victim !== undefined) {
        lastProcessVictimAt = at;
        fail(victim, { kind: "process-memory", rssMb: Math.round(rss / MB), limitMb: options.processMemoryLimitMb });
        Bun.gc(false);
      }
    }
    for (const thread of threads.values()) {
      if (thread.pingSentAt !== null) continue;
      thread.pingSentAt = at;
      thread.post({ type: "ping", id: pingId++ });
    }
  }

  /** The thread silent the longest (allocating, likely), else the one with the largest heap. */
  function processVictim(at: number, rss: number): ThreadState | undefined {
    let silent: ThreadState | undefined;
    let largest: ThreadState | undefined;
    for (const thread of threads.values()) {
      if (thread.runs.size === 0) continue;
      if (thread.pingSentAt !== null && at - thread.pingSentAt >= options.checkMs) {
        if (silent === undefined || (silent.pingSentAt ?? at) > thread.pingSentAt) silent = thread;
      }
      if (largest === undefined || thread.heapBytes > largest.heapBytes) largest = thread;
    }
    if (silent !== undefined) return silent;
    return largest !== undefined && largest.heapBytes > rss / 4 ? largest : undefined;
  }

  return {
    pick,
    dedicated: () => spawn(true),
    released(thread) {
      const state = threads.get(thread.id);
      if (state !== undefined && state.runs.size === 0 && (state.dedicated || state.retiring)) terminate(state);
    },
    close(thread) {
      const state = threads.get(thread.id);
      if (state !== undefined) terminate(state);
    },
    answers(thread, timeoutMs) {
      const state = threads.get(thread.id);
      if (state === undefined) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        state.waiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
        state.post({ type: "ping", id: pingId++ });
      });
    },
    get threads() {
      return [...threads.values()];
    },
    start() {
      timer ??= setInterval(check, options.checkMs);
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      for (const thread of [...threads.values()]) terminate(thread);
    },
  };
}
