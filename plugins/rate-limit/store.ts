/**
 * Fixed-window counters for the planning rate limits: one window per minute and one per UTC
 * day. In memory here, or shared by every instance in Redis (redis-store.ts).
 *
 * The memory store is atomic because JavaScript runs one request's check-and-increment
 * without interleaving. Daily counts are written behind to SQLite (flush()) so a restart does
 * not hand out a fresh day; a hard crash can forget at most one flush interval of counts.
 */
import type { Database } from "bun:sqlite";

export interface WindowState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  minute: WindowState;
  day: WindowState;
}

/**
 * `shared` tells the two kinds apart: the in-memory store answers synchronously, so its plugin
 * hook never awaits; a shared store (Redis) answers with promises and gets an async hook.
 */
export type RateLimitStore = LocalRateLimitStore | SharedRateLimitStore;

export interface LocalRateLimitStore {
  readonly shared: false;
  /** Counts one request if both windows have room; never counts a rejected one. */
  consume(company: string, nowMs: number): RateLimitDecision;
  peek(company: string, nowMs: number): RateLimitDecision;
  flush(): void;
}

export interface SharedRateLimitStore {
  readonly shared: true;
  consume(company: string, nowMs: number): Promise<RateLimitDecision>;
  peek(company: string, nowMs: number): Promise<RateLimitDecision>;
  flush(): void;
}

export interface RateLimits {
  perMinute: number;
  perDay: number;
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** The decision and headers' numbers for counts already used in the windows that hold `nowMs`. */
export function rateLimitDecision(
  limits: RateLimits,
  allowed: boolean,
  minuteUsed: number,
  dayUsed: number,
  nowMs: number,
): RateLimitDecision {
  return {
    allowed,
    minute: {
      limit: limits.perMinute,
      remaining: Math.max(0, limits.perMinute - minuteUsed),
      resetSeconds: Math.ceil(((Math.floor(nowMs / MINUTE_MS) + 1) * MINUTE_MS - nowMs) / 1000),
    },
    day: {
      limit: limits.perDay,
      remaining: Math.max(0, limits.perDay - dayUsed),
      resetSeconds: Math.ceil(((Math.floor(nowMs / DAY_MS) + 1) * DAY_MS - nowMs) / 1000),
    },
  };
}

export class MemoryRateLimitStore implements LocalRateLimitStore {
  readonly shared = false;
  private minuteWindow = -1;
  private readonly minuteCounts = new Map<string, number>();
  private dayWindow = -1;
  private readonly dayCounts = new Map<string, number>();
  private readonly dirty = new Set<string>();
  private readonly loadDay;
  private readonly saveDay;

  constructor(
    private readonly limits: RateLimits,
    private readonly sqlite: Database,
  ) {
    this.loadDay = sqlite.query<{ company: string; count: number }, [string]>(
      "SELECT company, count FROM rate_limit_days WHERE day = ?",
    );
    this.saveDay = sqlite.query(
      "INSERT INTO rate_limit_days (company, day, count) VALUES (?1, ?2, ?3) ON CONFLICT (company, day) DO UPDATE SET count = max(count, excluded.count)",
    );
  }

  consume(company: string, nowMs: number): RateLimitDecision {
    this.roll(nowMs);
    const minuteUsed = this.minuteCounts.get(company) ?? 0;
    const dayUsed = this.dayCounts.get(company) ?? 0;
    const allowed = minuteUsed < this.limits.perMinute && dayUsed < this.limits.perDay;
    if (allowed) {
      this.minuteCounts.set(company, minuteUsed + 1);
      this.dayCounts.set(company, dayUsed + 1);
      this.dirty.add(company);
    }
    return rateLimitDecision(this.limits, allowed, minuteUsed + (allowed ? 1 : 0), dayUsed + (allowed ? 1 : 0), nowMs);
  }

  peek(company: string, nowMs: number): RateLimitDecision {
    this.roll(nowMs);
    return rateLimitDecision(
      this.limits,
      true,
      this.minuteCounts.get(company) ?? 0,
      this.dayCounts.get(company) ?? 0,
      nowMs,
    );
  }

  flush(): void {
    if (this.dirty.size === 0) return;
    const day = dayKey(this.dayWindow);
    const rows = [...this.dirty].map((company) => [company, day, this.dayCounts.get(company) ?? 0] as const);
    this.dirty.clear();
    this.sqlite.transaction(() => {
      for (const row of rows) this.saveDay.run(...row);
    })();
  }

  private roll(nowMs: number): void {
    const minute = Math.floor(nowMs / MINUTE_MS);
    if (minute !== this.minuteWindow) {
      this.minuteWindow = minute;
      this.minuteCounts.clear();
    }
    const day = Math.floor(nowMs / DAY_MS);
    if (day !== this.dayWindow) {
      this.flush();
      this.dayWindow = day;
      this.dayCounts.clear();
      for (const row of this.loadDay.all(dayKey(day))) this.dayCounts.set(row.company, row.count);
    }
  }
}

const dayKey = (dayWindow: number): string => new Date(dayWindow * DAY_MS).toISOString().slice(0, 10);
