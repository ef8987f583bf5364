/**
 * Each Redis store on its own, against a real redis-server: two connections stand for two
 * gateway instances. What they share, how they expire, and what each does when Redis is gone.
 */
import { describe, expect, test } from "bun:test";
import { RedisConnection, RedisUnavailableError } from "../core/redis.ts";
import { RedisRateLimitStore } from "../plugins/rate-limit/redis-store.ts";
import { hasRedis, startRedis, type TestRedis, warnIfNoRedis } from "./support/redis.ts";

warnIfNoRedis("the Redis store tests");

const MINUTE = 60_000;
/** Mid-minute, mid-day: no window ends during a test that pins its clock here. */
const T0 = Date.UTC(2031, 4, 6, 12, 30, 20);

/** `n` connections to one Redis, closed on dispose: each stands for an instance. */
function connections(server: TestRedis, n: number, timeoutMs = 500) {
  const all = Array.from({ length: n }, () => new RedisConnection(server.url, { timeoutMs }));
  return Object.assign(all, {
    [Symbol.dispose]() {
      for (const redis of all) redis.close();
    },
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** Calls until Redis answers again (after a restart), or throws after `withinMs`. */
async function whenBack<T>(call: () => Promise<T>, withinMs = 5_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof RedisUnavailableError) || Date.now() > deadline) throw error;
      await Bun.sleep(50);
    }
  }
}

describe.skipIf(!hasRedis)("Redis rate limits", () => {
  test("two instances under concurrent load admit exactly the limit; both windows count; headers as in memory", async () => {
    await using server = await startRedis();
    using redis = connections(server, 2);
    const limits = { perMinute: 7, perDay: 10 };
    const [a, b] = redis.map((r) => new RedisRateLimitStore(r, limits));
    if (a === undefined || b === undefined) throw new Error("two stores");
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).consume("acme", T0 + i)),
    );
    expect(decisions.filter((d) => d.allowed).length).toBe(7);
    const refused = decisions.find((d) => !d.allowed);
    expect(refused?.minute).toEqual({ limit: 7, remaining: 0, resetSeconds: 40 });
    expect(refused?.day).toMatchObject({ limit: 10, remaining: 3 });
    // Another company has its own budget; peeking counts nothing.
    expect((await b.consume("other", T0)).minute.remaining).toBe(6);
    expect((await a.peek("acme", T0)).minute.remaining).toBe(0);
    expect((await a.peek("other", T0)).minute.remaining).toBe(6);
    // The next minute is open again, until the day's 10 are used.
    const next = await Promise.all(Array.from({ length: 6 }, () => b.consume("acme", T0 + MINUTE)));
    expect(next.map((d) => d.allowed)).toEqual([true, true, true, false, false, false]);
    expect(next[3]?.day.remaining).toBe(0);
  });

  test("counters expire a minute after their window ends", async () => {
    await using server = await startRedis();
    using redis = connections(server, 1);
    const store = new RedisRateLimitStore(redis[0] as RedisConnection, { perMinute: 5, perDay: 50 });
    const now = Date.now();
    await store.consume("acme", now);
    const client = server.client();
    const minuteKey = `health:rate:{acme}:minute:${Math.floor(now / MINUTE)}`;
    const dayKey = `health:rate:{acme}:day:${Math.floor(now / 86_400_000)}`;
    expect(((await client.send("KEYS", ["health:rate:*"])) as string[]).sort()).toEqual([dayKey, minuteKey]);
    const minuteEnd = (Math.floor(now / MINUTE) + 1) * MINUTE;
    const minuteTtl = Number(await client.send("PTTL", [minuteKey]));
    expect(Math.abs(minuteTtl - (minuteEnd + MINUTE - Date.now()))).toBeLessThan(1_000);
    const dayTtl = Number(await client.send("PTTL", [dayKey]));
    expect(dayTtl).toBeGreaterThan(MINUTE);
    expect(dayTtl).toBeLessThanOrEqual(86_400_000 + MINUTE);
  });

  test("Redis gone: every call rejects as unavailable (the plugin refuses); back: counting resumes", async () => {
    await using server = await startRedis();
    using redis = connections(server, 1);
    const store = new RedisRateLimitStore(redis[0] as RedisConnection, { perMinute: 5, perDay: 50 });
    expect((await store.consume("acme", T0)).allowed).toBe(true);
    await server.stop();
    expect(await rejection(store.consume("acme", T0))).toBeInstanceOf(RedisUnavailableError);
    expect(await rejection(store.peek("acme", T0))).toBeInstanceOf(RedisUnavailableError);
    await server.start();
    // Empty after the restart (no persistence here): the count starts again.
    expect(await whenBack(() => store.consume("acme", T0))).toMatchObject({ allowed: true, minute: { remaining: 4 } });
  });
});
