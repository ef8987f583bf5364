/**
 * Each Redis store on its own, against a real redis-server: two connections stand for two
 * gateway instances. What they share, how they expire, and what each does when Redis is gone.
 */
import { describe, expect, test } from "bun:test";
import { sha256Hex } from "../core/hash.ts";
import { RedisConnection, RedisUnavailableError } from "../core/redis.ts";
import { RedisRateLimitStore } from "../plugins/rate-limit/redis-store.ts";
import { RedisCacheStore } from "../plugins/cache/redis-store.ts";
import { planResultCodec } from "../plugins/cache/plan-codec.ts";
import { PlanResult } from "../http/plan-result.ts";
import { RedisIdempotencyStore } from "../plugins/idempotency/redis-store.ts";
import { RedisSlidingWindow } from "../server/services/redis-window.ts";
import { LoginLimiter } from "../server/services/accounts.ts";
import { DeviceStartLimiter } from "../server/services/device-logins.ts";
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
    await a.set("k1", plan, 400);
    const read = await b.get("k1");
    expect(read).toBeInstanceOf(PlanResult);
    expect(read).toEqual(plan);
    // Read again unchanged: the same object, so the sanitized answer made from it is reused;
    // the writer gets back the very object it stored.
    expect(await b.get("k1")).toBe(read as PlanResult);
    expect(await a.get("k1")).toBe(plan);
    const client = server.client();
    expect(JSON.parse((await client.get(`health:plan:${sha256Hex("k1")}`)) ?? "")).toEqual({
      draft: plan.draft,
      route: plan.route,
      blockedCategory: null,
    });
    const ttl = Number(await client.send("PTTL", [`health:plan:${sha256Hex("k1")}`]));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(400);
    await Bun.sleep(450);
    expect(await b.get("k1")).toBeUndefined();
  });

  test("a value another instance rewrote is decoded afresh, not served from what this one decoded before", async () => {
    await using server = await startRedis();
    using redis = connections(server, 2);
    const [a, b] = redis.map((r) => new RedisCacheStore(r, planResultCodec));
    if (a === undefined || b === undefined) throw new Error("two stores");
    await a.set("k", plan, 60_000);
    expect((await b.get("k"))?.draft.assistant_message).toBe("Scaffold an intake loop.");
    const other = new PlanResult({ ...plan.draft, assistant_message: "Another plan." }, plan.route);
    await a.set("k", other, 60_000);
    expect((await b.get("k"))?.draft.assistant_message).toBe("Another plan.");
    await server.client().send("DEL", [`health:plan:${sha256Hex("k")}`]);
    expect(await b.get("k")).toBeUndefined();
  });

  test("what does not decode as a plan (another writer, a broken value) is a miss", async () => {
    await using server = await startRedis();
    using redis = connection(server);
    const store = new RedisCacheStore(redis, planResultCodec);
    const client = server.client();
    await client.set(`health:plan:${sha256Hex("junk")}`, "not json");
    await client.set(
      `health:plan:${sha256Hex("shape")}`,
      JSON.stringify({ draft: { tool_plan: "rm -rf ~" }, route: null }),
    );
    await client.send("LPUSH", [`health:plan:${sha256Hex("list")}`, "x"]);
    expect(await store.get("junk")).toBeUndefined();
    expect(await store.get("shape")).toBeUndefined();
    expect(await store.get("list")).toBeUndefined();
  });

  test("Redis gone: a quick miss and a skipped write, never a rejection; back: stored and read again", async () => {
    await using server = await startRedis();
    using redis = connection(server);
    const store = new RedisCacheStore(redis, planResultCodec);
    await store.set("k", plan, 60_000);
    expect(await store.get("k")).toEqual(plan);
    await server.stop();
    const started = performance.now();
    expect(await store.get("k")).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(500);
    // Resolves (never rejects) without having written.
    expect(await store.set("k2", plan, 60_000)).toBeUndefined();
    await server.start();
    await whenBack(() => redis.send("PING", []));
    await store.set("k3", plan, 60_000);
    expect(await store.get("k3")).toEqual(plan);
    expect(await store.get("k2")).toBeUndefined();
  });
});

describe.skipIf(!hasRedis)("Redis idempotency keys", () => {
  const SCOPE = "tok_1 POST /cli/code/sessions";

  test("claimed by one instance: 409 on another while in flight, then the stored answer replays from any", async () => {
    await using server = await startRedis();
    using redis = connections(server, 2);
    const [a, b] = redis.map((r) => new RedisIdempotencyStore(r));
    if (a === undefined || b === undefined) throw new Error("two stores");
    expect(await a.begin(SCOPE, "k", "h1", T0)).toEqual({ kind: "new" });
    expect(await b.begin(SCOPE, "k", "h1", T0 + 10)).toEqual({ kind: "conflict", reason: "in_flight" });
    expect(await b.begin(SCOPE, "k", "h2", T0 + 10)).toEqual({ kind: "conflict", reason: "mismatch" });
    await a.complete(SCOPE, "k", 200, '{"plan":1}', { "x-health-cache": "miss" });
    for (const store of [a, b]) {
      expect(await store.begin(SCOPE, "k", "h1", T0 + 20)).toEqual({
        kind: "replay",
        status: 200,
        body: '{"plan":1}',
        headers: { "x-health-cache": "miss" },
      });
    }
    expect(await b.begin(SCOPE, "k", "h2", T0 + 20)).toEqual({ kind: "conflict", reason: "mismatch" });
    // Another scope (another token) has its own keys.
    expect(await b.begin("tok_2 POST /cli/code/sessions", "k", "h1", T0)).toEqual({ kind: "new" });
    // Kept 24 hours from the first request, completion included.
    const ttl = Number(await server.client().send("PTTL", [`health:idempotency:${SCOPE} k`]));
    expect(ttl).toBeGreaterThan(86_400_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000);
  });

  test("concurrent first requests on two instances: exactly one runs", async () => {
    await using server = await startRedis();
    using redis = connections(server, 2);
    const stores = redis.map((r) => new RedisIdempotencyStore(r));
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stores[i % 2]?.begin(SCOPE, "race", "h", T0)),
    );
    expect(outcomes.filter((o) => o?.kind === "new").length).toBe(1);
    expect(outcomes.filter((o) => o?.kind === "conflict").length).toBe(19);
  });

  test("abandoned (the call failed): the key is free for a retry on any instance", async () => {
    await using server = await startRedis();
    using redis = connections(server, 2);
    const [a, b] = redis.map((r) => new RedisIdempotencyStore(r));
    if (a === undefined || b === undefined) throw new Error("two stores");
    expect((await a.begin(SCOPE, "k", "h", T0)).kind).toBe("new");
    await a.abandon(SCOPE, "k");
    expect((await b.begin(SCOPE, "k", "h", T0 + 1)).kind).toBe("new");
  });

  test("a stale claim (its instance died) is taken over by exactly one; the loser cannot overwrite or free it", async () => {
    await using server = await startRedis();
    using redis = connections(server, 3);
    const [dead, b, c] = redis.map((r) => new RedisIdempotencyStore(r, 60_000));
    if (dead === undefined || b === undefined || c === undefined) throw new Error("three stores");
    expect((await dead.begin(SCOPE, "k", "h", T0)).kind).toBe("new");
    expect(await b.begin(SCOPE, "k", "h", T0 + 59_000)).toEqual({ kind: "conflict", reason: "in_flight" });
    const takeovers = await Promise.all([b.begin(SCOPE, "k", "h", T0 + 61_000), c.begin(SCOPE, "k", "h", T0 + 61_000)]);
    expect(takeovers.map((o) => o.kind).sort()).toEqual(["conflict", "new"]);
    const winner = takeovers[0]?.kind === "new" ? b : c;
    // The first claimant comes back late: neither its answer nor its release touches the new claim.
    await dead.complete(SCOPE, "k", 200, '{"stale":true}', {});
    await dead.abandon(SCOPE, "k");
    expect(await dead.begin(SCOPE, "k", "h", T0 + 62_000)).toEqual({ kind: "conflict", reason: "in_flight" });
    await winner.complete(SCOPE, "k", 200, '{"fresh":true}', {});
    expect(await dead.begin(SCOPE, "k", "h", T0 + 63_000)).toMatchObject({ kind: "replay", body: '{"fresh":true}' });
  });

  test("Redis gone: begin rejects as unavailable (the plugin refuses), complete and abandon do not throw; back: usable", async () => {
    await using server = await startRedis();
    using redis = connection(server);
    const store = new RedisIdempotencyStore(redis);
    expect((await store.begin(SCOPE, "k1", "h", T0)).kind).toBe("new");
    expect((await store.begin(SCOPE, "k2", "h", T0)).kind).toBe("new");
    await server.stop();
    expect(await rejection(store.begin(SCOPE, "k3", "h", T0))).toBeInstanceOf(RedisUnavailableError);
    expect(await rejection(store.complete(SCOPE, "k1", 200, "{}", {}))).toBeUndefined();
    expect(await rejection(store.abandon(SCOPE, "k2"))).toBeUndefined();
    await server.start();
    expect(await whenBack(() => store.begin(SCOPE, "k3", "h", T0))).toEqual({ kind: "new" });
  });
});

describe.skipIf(!hasRedis)("Redis sliding windows (sign-in and device-link throttles)", () => {
  test("take admits exactly max across instances under concurrent load; the window slides", async () => {
    await using server = await startRedis();
    using redis = connections(server, 2);
    const windows = redis.map((r) => new RedisSlidingWindow(r, "health:device-start:", 10, MINUTE));
    const taken = await Promise.all(
      Array.from({ length: 30 }, (_, i) => windows[i % 2]?.take("10.0.0.2", T0 + (i % 3))),
    );
    expect(taken.filter(Boolean).length).toBe(10);
    const [a, b] = windows;
    if (a === undefined || b === undefined) throw new Error("two windows");
    expect(await b.full("10.0.0.2", T0 + 10)).toBe(true);
    expect(await a.take("10.0.0.3", T0 + 10)).toBe(true);
    // A minute after the first events they have left the window.
    expect(await a.full("10.0.0.2", T0 + MINUTE + 3)).toBe(false);
    expect(await b.take("10.0.0.2", T0 + MINUTE + 3)).toBe(true);
  });

  test("sign-in failures counted on one instance block on another; a success clears them; keys are hashed", async () => {
    await using server = await startRedis();
    using redis = connections(server, 2);
    const [a, b] = redis.map((r) => new LoginLimiter(new RedisSlidingWindow(r, "health:login:", 5, 15 * MINUTE)));
    if (a === undefined || b === undefined) throw new Error("two limiters");
    const keys = ["email:a@example.com", "ip:10.0.0.1"];
    for (let i = 0; i < 4; i++) await (i % 2 === 0 ? a : b).fail(keys, T0 + i);
    expect(await b.blocked(keys, T0 + 10)).toBe(false);
    await a.fail(keys, T0 + 11);
    expect(await b.blocked(["email:a@example.com"], T0 + 12)).toBe(true);
    expect(await b.blocked(["email:other@example.com", "ip:10.0.0.1"], T0 + 12)).toBe(true);
    expect(await a.blocked(keys, T0 + 15 * MINUTE + 12)).toBe(false);
    const stored = (await server.client().send("KEYS", ["health:login:*"])) as string[];
    expect(stored.length).toBe(2);
    for (const key of stored) expect(key).toMatch(/^health:login:[0-9a-f]{64}$/);
    const ttl = Number(await server.client().send("PTTL", [stored[0] ?? ""]));
    expect(ttl).toBeGreaterThan(14 * MINUTE);
    await b.succeed(keys);
    expect(await a.blocked(keys, T0 + 13)).toBe(false);
  });

  test("Redis gone: the limiters reject as unavailable (callers refuse); back: counting again", async () => {
    await using server = await startRedis();
    using redis = connection(server);
    const login = new LoginLimiter(new RedisSlidingWindow(redis, "health:login:", 5, 15 * MINUTE));
    const device = new DeviceStartLimiter(new RedisSlidingWindow(redis, "health:device-start:", 10, MINUTE));
    expect(await device.take("10.0.0.2", T0)).toBe(true);
    await server.stop();
    expect(await rejection(login.blocked(["ip:10.0.0.1"], T0))).toBeInstanceOf(RedisUnavailableError);
    expect(await rejection(login.fail(["ip:10.0.0.1"], T0))).toBeInstanceOf(RedisUnavailableError);
    expect(await rejection(device.take("10.0.0.2", T0))).toBeInstanceOf(RedisUnavailableError);
    await server.start();
    expect(await whenBack(() => device.take("10.0.0.2", T0))).toBe(true);
    expect(await login.blocked(["ip:10.0.0.1"], T0)).toBe(false);
  });
});
