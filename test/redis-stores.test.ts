/**
 * Each Redis store on its own, against a real redis-server: two connections stand for two
 * gateway instances. What they share, how they expire, and what each does when Redis is gone.
 */
import { describe, expect, test } from "bun:test";
import { RedisConnection, RedisUnavailableError } from "../core/redis.ts";
import { RedisRateLimitStore } from "../plugins/rate-limit/redis-store.ts";
import { RedisCacheStore } from "../plugins/cache/redis-store.ts";
import { planResultCodec } from "../plugins/cache/plan-codec.ts";
import { PlanResult } from "../http/plan-result.ts";
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

/** One connection, closed on dispose. */
function connection(server: TestRedis, timeoutMs = 500): RedisConnection & Disposable {
  const redis = new RedisConnection(server.url, { timeoutMs });
  return Object.assign(redis, {
    [Symbol.dispose]() {
      redis.close();
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
    using redis = connection(server);
    const store = new RedisRateLimitStore(redis, { perMinute: 5, perDay: 50 });
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
    using redis = connection(server);
    const store = new RedisRateLimitStore(redis, { perMinute: 5, perDay: 50 });
    expect((await store.consume("acme", T0)).allowed).toBe(true);
    await server.stop();
    expect(await rejection(store.consume("acme", T0))).toBeInstanceOf(RedisUnavailableError);
    expect(await rejection(store.peek("acme", T0))).toBeInstanceOf(RedisUnavailableError);
    await server.start();
    // Empty after the restart (no persistence here): the count starts again.
    expect(await whenBack(() => store.consume("acme", T0))).toMatchObject({ allowed: true, minute: { remaining: 4 } });
  });
});

describe.skipIf(!hasRedis)("Redis plan cache", () => {
  const plan = new PlanResult(
    {
      assistant_message: "Scaffold an intake loop.",
      tool_plan: [
        { kind: "scaffold", command: "health init intake --channel sms", purpose: "x", requires_auth: false },
      ],
    },
    { egress: "gateway.example", provider: "Chutes", model: "m" },
  );

  test("a value stored by one instance is read by another, as JSON, until its PX expiry", async () => {
    await using server = await startRedis();
    using redis = connections(server, 2);
    const [a, b] = redis.map((r) => new RedisCacheStore(r, planResultCodec));
    if (a === undefined || b === undefined) throw new Error("two stores");
    expect(await b.get("k1")).toBeUndefined();
    a.set("k1", plan, 400);
    await Bun.sleep(20);
    const read = await b.get("k1");
    expect(read).toBeInstanceOf(PlanResult);
    expect(read).toEqual(plan);
    const client = server.client();
    expect(JSON.parse((await client.get("health:plan:k1")) ?? "")).toEqual({
      draft: plan.draft,
      route: plan.route,
      blockedCategory: null,
    });
    const ttl = Number(await client.send("PTTL", ["health:plan:k1"]));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(400);
    await Bun.sleep(450);
    expect(await b.get("k1")).toBeUndefined();
  });

  test("what does not decode as a plan (another writer, a broken value) is a miss", async () => {
    await using server = await startRedis();
    using redis = connection(server);
    const store = new RedisCacheStore(redis, planResultCodec);
    const client = server.client();
    await client.set("health:plan:junk", "not json");
    await client.set("health:plan:shape", JSON.stringify({ draft: { tool_plan: "rm -rf ~" }, route: null }));
    await client.send("LPUSH", ["health:plan:list", "x"]);
    expect(await store.get("junk")).toBeUndefined();
    expect(await store.get("shape")).toBeUndefined();
    expect(await store.get("list")).toBeUndefined();
  });

  test("Redis gone: a quick miss and a skipped write, never an error; back: stored and read again", async () => {
    await using server = await startRedis();
    using redis = connection(server);
    const store = new RedisCacheStore(redis, planResultCodec);
    store.set("k", plan, 60_000);
    await Bun.sleep(20);
    expect(await store.get("k")).toEqual(plan);
    await server.stop();
    const started = performance.now();
    expect(await store.get("k")).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(500);
    expect(() => store.set("k2", plan, 60_000)).not.toThrow();
    await server.start();
    await whenBack(() => redis.send("PING", []));
    store.set("k3", plan, 60_000);
    await Bun.sleep(20);
    expect(await store.get("k3")).toEqual(plan);
    expect(await store.get("k2")).toBeUndefined();
  });
});
