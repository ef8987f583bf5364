/**
 * When to claim: a pass runs after every trigger and every run that leaves (coalesced, so a burst
 * costs one pass), when the earliest sleeper is due (one timer for all of them), and on a poll
 * interval that picks up work other processes made ready. Each pass claims up to the engine's free
 * capacity, within the organization and loop limits (claims.ts, claims-postgres.ts).
 *
 * Claims answer with promises: one pass runs at a time. A request for a pass while one is going
 * (a wake, the poll, the wake timer) makes exactly one more pass follow it, so work made ready
 * during a pass is never missed and passes never overlap.
 */
import type { AsyncClaims, ClaimLimits } from "./claims.ts";
import type { EngineLogger } from "./engine.ts";
import type { ClaimedRun } from "./store.ts";

export interface SchedulerOptions {
  claims: AsyncClaims;
  owner: string;
  now: () => number;
  logger: EngineLogger;
  leaseMs: number;
  pollMs: number;
  /** Runs this engine executes at once. */
  capacity: number;
  perOrg: number;
  perLoop: ClaimLimits["perLoop"];
  /** Runs executing here now. */
  inFlight: () => number;
  isActive: (runId: string) => boolean;
  launch: (claim: ClaimedRun) => void;
}

export function createScheduler(options: SchedulerOptions) {
  const { claims, now, logger } = options;
  let running = false;
  /** A wake is waiting for its setImmediate. */
  let queued = false;
  /** The passes in progress (one, then the one asked for meanwhile), while any. */
  let passing: Promise<void> | undefined;
  /** A pass was asked for while one was going. */
  let again = false;
  /** Passes started since start, for the heartbeat (engine.ts). */
  let passes = 0;
  let pollTimer: ReturnType<typeof setInterval> | undefined;
  let wakeTimer: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;

  /** Starts a pass, or asks the one going for a successor. */
  function requestPass(): void {
    if (!running) return;
    if (passing !== undefined) {
      again = true;
      return;
    }
    passing = (async () => {
      do {
        again = false;
        await pass();
      } while (again && running);
    })().finally(() => {
      passing = undefined;
    });
  }

  async function pass(): Promise<void> {
    passes += 1;
    try {
      const free = options.capacity - options.inFlight();
      const at = now();
      const claimed = await claims.claim(options.owner, at, at + options.leaseMs, {
        max: free,
        perOrg: options.perOrg,
        perLoop: options.perLoop,
      });
      for (const claim of claimed) {
        // Our own run whose lease lapsed while the event loop stalled: the claim renewed it, and
        // it is still executing here.
        if (options.isActive(claim.id)) continue;
        options.launch(claim);
      }
      if (running) await armWakeTimer();
    } catch (error) {
      // The poll tries again; a failing database must not throw into a timer.
      logger.error("loop engine: scheduling failed", { error: error instanceof Error ? error.name : "unknown" });
    }
  }

  /**
   * The poll catches everything eventually; this timer makes a short sleep wake on time. With no
   * free capacity there is nothing to arm: the next run to leave triggers a pass anyway, and a
   * timer for a sleeper already due would fire again and again.
   */
  async function armWakeTimer(): Promise<void> {
    if (options.inFlight() >= options.capacity) return;
    const wakeAt = await claims.nextWakeAt();
    if (!running || wakeAt === null || (wakeTimer !== undefined && wakeTimer.at <= wakeAt)) return;
    if (wakeTimer !== undefined) clearTimeout(wakeTimer.timer);
    const timer = setTimeout(
      () => {
        wakeTimer = undefined;
        requestPass();
      },
      Math.max(0, wakeAt - now()),
    );
    wakeTimer = { at: wakeAt, timer };
  }

  return {
    /** Passes started so far; a pass in progress counts. */
    get passes() {
      return passes;
    },
    get passing() {
      return passing !== undefined;
    },
    /** Asks for a pass soon (after the caller's reply is sent). */
    wake(): void {
      if (!running || queued) return;
      queued = true;
      setImmediate(() => {
        queued = false;
        requestPass();
      });
    },
    start(): void {
      if (running) return;
      running = true;
      pollTimer = setInterval(requestPass, options.pollMs);
      requestPass();
    },
    /** Stops asking for passes; resolves once the pass in progress, if any, has launched its runs. */
    async stop(): Promise<void> {
      running = false;
      clearInterval(pollTimer);
      if (wakeTimer !== undefined) clearTimeout(wakeTimer.timer);
      wakeTimer = undefined;
      await passing;
    },
  };
}
