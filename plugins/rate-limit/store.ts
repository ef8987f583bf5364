/**
 * Fixed-window counters for the planning rate limits: one window per minute and one per UTC
 * day. In memory here, or shared by every instance in Redis (redis-store.ts).
 *
 * The memory store is atomic because JavaScript runs one request's check-and-increment
 * without interleaving. Daily counts are written behind to the database (flush(): SQLite here,
 * PostgreSQL in day-counts-postgres.ts) so a restart does not hand out a fresh day; a hard crash
 * can forget at most one flush interval of counts.
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

export type DayCountRow = readonly [company: string, day: string, count: number];

/**
 * Where the daily counts survive a restart. SQLite answers at once; PostgreSQL with promises,
 * so its counts of a new day arrive after the day's first requests (see `preload`).
 */
export interface DayCountStore {
  /** The counts stored for a day (`YYYY-MM-DD`, UTC). */
  load(
    day: string,
  ): ReadonlyArray<{ company: string; count: number }> | Promise<Array<{ company: string; count: number }>>;
  /** Stores each count, keeping the larger where one is stored already (another instance's). */
  save(rows: readonly DayCountRow[]): void | Promise<void>;
}

/** The day counts in the SQLite file, through statements prepared once. */
export class SqliteDayCounts implements DayCountStore {
  private readonly loadDay;
  private readonly saveDay;
  private readonly saveAll;

  constructor(sqlite: Database) {
    this.loadDay = sqlite.query<{ company: string; count: number }, [string]>(
      "SELECT company, count FROM rate_limit_days WHERE day = ?",
    );
    this.saveDay = sqlite.query(
      "INSERT INTO rate_limit_days (company, day, count) VALUES (?1, ?2, ?3) ON CONFLICT (company, day) DO UPDATE SET count = max(count, excluded.count)",
    );
    this.saveAll = sqlite.transaction((rows: readonly DayCountRow[]) => {
      for (const row of rows) this.saveDay.run(...row);
    });
  }

  load(day: string): Array<{ company: string; count: number }> {
    return this.loadDay.all(day);
  }

  save(rows: readonly DayCountRow[]): void {
    this.saveAll.immediate(rows);
  }
}

export class MemoryRateLimitStore implements LocalRateLimitStore {
  readonly shared = false;
  private minuteWindow = -1;
  private readonly minuteCounts = new Map<string, number>();
  private dayWindow = -1;
  private readonly dayCounts = new Map<string, number>();
  private readonly dirty = new Set<string>();
  /** Saves not yet settled (PostgreSQL), for `settled()`. */
  private readonly saving = new Set<Promise<void>>();
  /** The load of the current day's stored counts, while it is pending (PostgreSQL). */
  private loading: Promise<void> | null = null;

  constructor(
    private readonly limits: RateLimits,
    private readonly days: DayCountStore,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /**
   * Loads the stored counts of the day that holds `nowMs` before the first request: where the
   * store answers with promises (PostgreSQL), call it at start so a restart does not hand out a
   * fresh day. Over SQLite the first request loads them at once anyway.
   */
  async preload(nowMs: number): Promise<void> {
    this.roll(nowMs);
    await this.loading;
  }

  /** Resolves when every save handed to the store so far has settled (before closing it). */
  async settled(): Promise<void> {
    await Promise.all([...this.saving]);
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
    const dayWindow = this.dayWindow;
    const day = dayKey(dayWindow);
    const rows: DayCountRow[] = [...this.dirty].map((company) => [company, day, this.dayCounts.get(company) ?? 0]);
    this.dirty.clear();
    const saved = this.days.save(rows);
    if (saved === undefined) return;
    // A save that fails is retried by the next flush, if the day has not ended.
    const tracked = saved.catch((error: unknown) => {
      if (this.dayWindow === dayWindow) for (const [company] of rows) this.dirty.add(company);
      this.onError(error);
    });
    this.saving.add(tracked);
    void tracked.finally(() => this.saving.delete(tracked));
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
      const stored = this.days.load(dayKey(day));
      if (!(stored instanceof Promise)) {
        for (const row of stored) this.dayCounts.set(row.company, row.count);
        return;
      }
      // Counted meanwhile and stored: the larger stands, as the store keeps it.
      const loading = stored.then(
        (rows) => {
          if (this.dayWindow !== day) return;
          for (const row of rows) {
            this.dayCounts.set(row.company, Math.max(row.count, this.dayCounts.get(row.company) ?? 0));
          }
        },
        (error: unknown) => this.onError(error),
      );
      this.loading = loading;
      void loading.finally(() => {
        if (this.loading === loading) this.loading = null;
      });
    }
  }
}

const dayKey = (dayWindow: number): string => new Date(dayWindow * DAY_MS).toISOString().slice(0, 10);
