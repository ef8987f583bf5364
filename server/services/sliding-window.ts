/**
 * Sliding-window counts per key: how many events a key had in the last `windowMs`. The sign-in
 * and device-link limiters both use one, in memory (here) or in Redis (redis-window.ts), where
 * every instance sees the same counts; the Redis one answers with promises.
 */
export interface EventWindow {
  /** True when `key` has used up the window. */
  full(key: string, now?: number): boolean | Promise<boolean>;
  /** Records an event for `key`. */
  add(key: string, now?: number): void | Promise<void>;
  /** Records an event unless the window is full; false (nothing recorded) when it is. */
  take(key: string, now?: number): boolean | Promise<boolean>;
  forget(key: string): void | Promise<void>;
}

/**
 * In memory. Keys whose events all left the window are forgotten (swept when the map grows,
 * and at most once per window), so a stream of distinct keys (50,000 email addresses tried
 * once each) cannot grow it without bound.
 */
export class SlidingWindow implements EventWindow {
  private readonly events = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(
    readonly max: number,
    readonly windowMs: number,
    /** Sweep when the map holds more keys than this, at most once per window. */
    private readonly sweepAbove = 1_000,
  ) {}

  /** Events of `key` in the window ending at `now`. */
  count(key: string, now = Date.now()): number {
    return this.recent(key, now).length;
  }

  /** True when `key` has used up the window. */
  full(key: string, now = Date.now()): boolean {
    return this.count(key, now) >= this.max;
  }

  /** Records an event for `key`. */
  add(key: string, now = Date.now()): void {
    this.sweep(now);
    this.events.set(key, [...this.recent(key, now), now]);
  }

  /** Records an event unless the window is full; false (nothing recorded) when it is. */
  take(key: string, now = Date.now()): boolean {
    if (this.full(key, now)) return false;
    this.add(key, now);
    return true;
  }

  forget(key: string): void {
    this.events.delete(key);
  }

  /** Keys held in memory (for tests and metrics). */
  get size(): number {
    return this.events.size;
  }

  private recent(key: string, now: number): number[] {
    const times = this.events.get(key);
    if (times === undefined) return [];
    const kept = times.filter((t) => now - t < this.windowMs);
    if (kept.length === 0) this.events.delete(key);
    return kept;
  }

  private sweep(now: number): void {
    if (this.events.size <= this.sweepAbove || now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [key, times] of this.events) {
      if (times.every((t) => now - t >= this.windowMs)) this.events.delete(key);
    }
  }
}
