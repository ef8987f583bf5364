/**
 * The daily rate-limit counts over both dialects (plugins/rate-limit/store.ts, day-counts-postgres.ts):
 * counted in memory, written behind, and found again by a store started after a restart; two
 * instances' counts of one day keep the larger; a new day starts from what is stored for it.
 * PostgreSQL's half skips, saying so, where it is not installed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { PostgresDayCounts } from "../plugins/rate-limit/day-counts-postgres.ts";
import { type DayCountStore, MemoryRateLimitStore, SqliteDayCounts } from "../plugins/rate-limit/store.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";

const LIMITS = { perMinute: 1_000, perDay: 10 };
const DAY_MS = 86_400_000;
const T0 = Date.UTC(2031, 4, 6, 12);

afterAll(stopPostgres);

const daysOf = (h: DialectHarness): DayCountStore =>
  h.dialect === "sqlite" ? new SqliteDayCounts(h.db.sqlite) : new PostgresDayCounts(h.db);

/** A store as the server starts it: today's stored counts loaded before the first request. */
async function started(h: DialectHarness, nowMs: number): Promise<MemoryRateLimitStore> {
  const store = new MemoryRateLimitStore(LIMITS, daysOf(h));
  await store.preload(nowMs);
  return store;
}

async function flushed(store: MemoryRateLimitStore): Promise<void> {
  store.flush();
  await store.settled();
}

describe.each(dialects("the daily rate-limit count tests"))("daily rate-limit counts on $name", ({ skip, open }) => {
  test.skipIf(skip)("counts survive a restart, and the day's limit holds across it", async () => {
    const h = await open();
    try {
      const first = await started(h, T0);
      for (let i = 0; i < 7; i++) expect(first.consume("acme", T0 + i).allowed).toBe(true);
      first.consume("zenith", T0);
      await flushed(first);

      const second = await started(h, T0 + 60_000);
      expect(second.peek("acme", T0 + 60_000).day.remaining).toBe(3);
      expect(second.peek("zenith", T0 + 60_000).day.remaining).toBe(9);
      for (let i = 0; i < 3; i++) expect(second.consume("acme", T0 + 60_000).allowed).toBe(true);
      const refused = second.consume("acme", T0 + 60_000);
      expect(refused.allowed).toBe(false);
      expect(refused.day.remaining).toBe(0);
      await flushed(second);
      expect(
        (await h.rows("rateLimitDays"))
          .sort((a, b) => a.company.localeCompare(b.company))
          .map((r) => [r.company, r.count]),
      ).toEqual([
        ["acme", 10],
        ["zenith", 1],
      ]);
    } finally {
      await h.close();
    }
  });

  test.skipIf(skip)("two instances flushing one day keep the larger count; a new day starts from its own", async () => {
    const h = await open();
    try {
      const [a, b] = [await started(h, T0), await started(h, T0)];
      for (let i = 0; i < 5; i++) a.consume("acme", T0);
      b.consume("acme", T0);
      await Promise.all([flushed(a), flushed(b)]);
      await flushed(a);
      expect((await h.rows("rateLimitDays")).map((r) => [r.company, r.day, r.count])).toEqual([
        ["acme", "2031-05-06", 5],
      ]);

      // The next day: nothing stored yet, so the full budget; its counts are a row of their own.
      const tomorrow = T0 + DAY_MS;
      await a.preload(tomorrow);
      expect(a.peek("acme", tomorrow).day.remaining).toBe(10);
      a.consume("acme", tomorrow);
      await flushed(a);
      const restarted = await started(h, tomorrow);
      expect(restarted.peek("acme", tomorrow).day.remaining).toBe(9);
      expect((await h.rows("rateLimitDays")).map((r) => `${r.day} ${r.count}`).sort()).toEqual([
        "2031-05-06 5",
        "2031-05-07 1",
      ]);
    } finally {
      await h.close();
    }
  });
});
