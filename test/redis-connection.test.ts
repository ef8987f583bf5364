/**
 * The Redis connection under a real redis-server: commands answer, a stopped Redis fails fast
 * with RedisUnavailableError, a paused one within the deadline, and the next commands after it
 * returns (on the same port) are answered again.
 */
import { describe, expect, test } from "bun:test";
import { RECONNECT_EVERY_MS, RedisConnection, RedisUnavailableError } from "../core/redis.ts";
import { hasRedis, startRedis, warnIfNoRedis } from "./support/redis.ts";

warnIfNoRedis("the Redis connection tests");

/** Retries `send` until Redis answers again, or fails after `withinMs`. */
async function answeredAgain(redis: RedisConnection, withinMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    try {
      await redis.send("PING", []);
      return performance.now() - started;
    } catch (error) {
      expect(error).toBeInstanceOf(RedisUnavailableError);
      if (performance.now() - started > withinMs) throw error;
      await Bun.sleep(25);
    }
  }
}

describe.skipIf(!hasRedis)("Redis connection", () => {
  test("answers commands; an error reply that is a bug is not taken for an outage", async () => {
    await using server = await startRedis();
    const redis = new RedisConnection(server.url, { timeoutMs: 500 });
    try {
      expect(await redis.ping()).toBe(true);
      expect(await redis.send("SET", ["k", "v", "NX", "PX", "10000"])).toBe("OK");
      expect(await redis.send("SET", ["k", "v", "NX", "PX", "10000"])).toBeNull();
      const wrongType = await redis.send("LPUSH", ["k", "x"]).catch((error: unknown) => error);
      expect(String(wrongType)).toMatch(/WRONGTYPE/);
      expect(wrongType).not.toBeInstanceOf(RedisUnavailableError);
    } finally {
      redis.close();
    }
  });

  test("stopped: commands fail at once; restarted on the same port: answered again", async () => {
    await using server = await startRedis();
    const redis = new RedisConnection(server.url, { timeoutMs: 500 });
    try {
      expect(await redis.ping()).toBe(true);
      await server.stop();
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        expect(await redis.send("PING", []).catch((error: unknown) => error)).toBeInstanceOf(RedisUnavailableError);
        expect(performance.now() - started).toBeLessThan(500);
      }
      await server.start();
      // The next attempt is at most RECONNECT_EVERY_MS away.
      expect(await answeredAgain(redis, 5_000)).toBeLessThan(RECONNECT_EVERY_MS + 1_000);
    } finally {
      redis.close();
    }
  });

  test("paused (socket open, no answers): a command gives up at its deadline, then recovers", async () => {
    await using server = await startRedis();
    const redis = new RedisConnection(server.url, { timeoutMs: 300 });
    try {
      expect(await redis.ping()).toBe(true);
      server.pause();
      const started = performance.now();
      const stuck = await Promise.allSettled([redis.send("PING", []), redis.send("GET", ["x"])]);
      const waited = performance.now() - started;
      expect(stuck.map((s) => s.status)).toEqual(["rejected", "rejected"]);
      for (const s of stuck) if (s.status === "rejected") expect(s.reason).toBeInstanceOf(RedisUnavailableError);
      expect(waited).toBeGreaterThanOrEqual(290);
      expect(waited).toBeLessThan(1_000);
      // Right after a timeout, commands fail at once instead of each waiting out a deadline.
      const fast = performance.now();
      await redis.send("PING", []).catch(() => {});
      expect(performance.now() - fast).toBeLessThan(100);
      server.resume();
      expect(await answeredAgain(redis, 5_000)).toBeLessThan(RECONNECT_EVERY_MS + 1_000);
    } finally {
      redis.close();
    }
  });

  test("nothing listening at start: ping says false without throwing or hanging", async () => {
    await using server = await startRedis();
    await server.stop();
    const redis = new RedisConnection(server.url, { timeoutMs: 300 });
    try {
      const started = performance.now();
      expect(await redis.ping()).toBe(false);
      expect(performance.now() - started).toBeLessThan(1_000);
      await server.start();
      expect(await answeredAgain(redis, 5_000)).toBeLessThan(RECONNECT_EVERY_MS + 1_000);
    } finally {
      redis.close();
    }
  });
});
