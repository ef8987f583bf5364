/**
 * The state instances would otherwise each keep to themselves: rate limits, plan cache,
 * planning Idempotency-Keys, sign-in and device-link throttles. In process (and the SQLite
 * file) by default; in Redis, shared by every instance, when HEALTH_REDIS_URL is set
 * (docs/deploy.md says what each one does while Redis is down).
 */
import { RedisConnection } from "../core/redis.ts";
import { type DayCountStore, MemoryRateLimitStore, type RateLimitStore } from "../plugins/rate-limit/store.ts";
import { RedisRateLimitStore } from "../plugins/rate-limit/redis-store.ts";
import { type CacheStore, MemoryCacheStore } from "../plugins/cache/store.ts";
import { RedisCacheStore } from "../plugins/cache/redis-store.ts";
import { planResultCodec } from "../plugins/cache/plan-codec.ts";
import type { PlanResult } from "../http/plan-result.ts";
import type { IdempotencyStore } from "../plugins/idempotency/store.ts";
import { RedisIdempotencyStore } from "../plugins/idempotency/redis-store.ts";
import { LOGIN_FAILURES, LoginLimiter } from "./services/accounts.ts";
import { DEVICE_STARTS, DeviceStartLimiter } from "./services/device-logins.ts";
import { RedisSlidingWindow } from "./services/redis-window.ts";
import type { Config } from "./config.ts";

export interface Stores {
  /** Set when HEALTH_REDIS_URL is. */
  redis: RedisConnection | undefined;
  rateLimits: RateLimitStore;
  planCache: CacheStore<PlanResult>;
  /** Triggers keep theirs in the database whatever this is (server/routes/loops.ts). */
  planningIdempotency: IdempotencyStore;
  loginLimiter: LoginLimiter;
  deviceStartLimiter: DeviceStartLimiter;
  /**
   * Loads today's stored rate-limit counts (no Redis): await it before listening, so a restart
   * does not hand out a fresh day where they come with a promise (PostgreSQL).
   */
  ready(): Promise<void>;
  /** Resolves when the day counts handed to the database so far are saved: await it before closing it. */
  settled(): Promise<void>;
}

/** What the database keeps when there is no Redis, in whichever dialect it is. */
export interface DatabaseStores {
  /** `SqliteDayCounts` or `PostgresDayCounts` (plugins/rate-limit/). */
  dayCounts: DayCountStore;
  /** Planning Idempotency-Keys: `SqliteIdempotencyStore` or `PostgresIdempotencyStore`. */
  idempotency: IdempotencyStore;
}

export function createStores(config: Config, database: DatabaseStores): Stores {
  const limits = { perMinute: config.HEALTH_RATE_LIMIT_PER_MINUTE, perDay: config.HEALTH_RATE_LIMIT_PER_DAY };
  if (config.HEALTH_REDIS_URL === undefined) {
    const rateLimits = new MemoryRateLimitStore(limits, database.dayCounts);
    return {
      redis: undefined,
      rateLimits,
      planCache: new MemoryCacheStore<PlanResult>(),
      planningIdempotency: database.idempotency,
      loginLimiter: new LoginLimiter(),
      deviceStartLimiter: new DeviceStartLimiter(),
      ready: () => rateLimits.preload(Date.now()),
      settled: () => rateLimits.settled(),
    };
  }
  const redis = new RedisConnection(config.HEALTH_REDIS_URL, { timeoutMs: config.HEALTH_REDIS_TIMEOUT_MS });
  return {
    redis,
    rateLimits: new RedisRateLimitStore(redis, limits),
    planCache: new RedisCacheStore(redis, planResultCodec),
    planningIdempotency: new RedisIdempotencyStore(redis),
    loginLimiter: new LoginLimiter(
      new RedisSlidingWindow(redis, "health:login:", LOGIN_FAILURES.max, LOGIN_FAILURES.windowMs),
    ),
    deviceStartLimiter: new DeviceStartLimiter(
      new RedisSlidingWindow(redis, "health:device-start:", DEVICE_STARTS.max, DEVICE_STARTS.windowMs),
    ),
    // Redis keeps the counts itself, and writes nothing behind.
    ready: () => Promise.resolve(),
    settled: () => Promise.resolve(),
  };
}

/** Where Redis is, for the log: host and port only, never the password a URL may carry. */
export function redisLocation(url: string): string {
  const parsed = new URL(url);
  return parsed.host === "" ? parsed.pathname : parsed.host;
}
