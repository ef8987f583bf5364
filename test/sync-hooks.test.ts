/**
 * The in-process stores keep the planning hooks synchronous. Elysia awaits a hook when it is an
 * async function or when its source text looks like it returns a promise (a `return` of a
 * call, or the words async/await anywhere in it, comments included), and each await costs every
 * request a turn. Only the shared (Redis) stores get async hooks.
 */
import { describe, expect, test } from "bun:test";
import { isAsync } from "elysia/compose";
import { idempotency } from "../plugins/idempotency/index.ts";
import { SqliteIdempotencyStore } from "../plugins/idempotency/store.ts";
import { rateLimit } from "../plugins/rate-limit/index.ts";
import { MemoryRateLimitStore } from "../plugins/rate-limit/store.ts";
import { openDatabase } from "../server/db.ts";
import { RedisConnection } from "../core/redis.ts";
import { RedisRateLimitStore } from "../plugins/rate-limit/redis-store.ts";
import { RedisIdempotencyStore } from "../plugins/idempotency/redis-store.ts";

type Hook = { fn: (...args: never[]) => unknown };

function hooks(plugin: unknown): Array<{ name: string; async: boolean }> {
  const events = (plugin as { event: Record<string, Hook[] | undefined> }).event;
  return ["transform", "beforeHandle", "mapResponse"].flatMap((kind) =>
    (events[kind] ?? [])
      .filter((hook) => hook.fn.name !== "addServerTiming")
      .map((hook) => ({ name: hook.fn.name, async: isAsync(hook.fn) })),
  );
}

describe("planning hooks over in-process stores", () => {
  test("rate limit and idempotency hooks are synchronous for Elysia; the Redis variants are async", () => {
    const db = openDatabase(":memory:");
    try {
      const memory = new MemoryRateLimitStore({ perMinute: 20, perDay: 200 }, db.sqlite);
      const sqlite = new SqliteIdempotencyStore(db.sqlite);
      expect(hooks(rateLimit({ store: memory }))).toEqual([{ name: "checkRateLimit", async: false }]);
      expect(hooks(idempotency({ store: sqlite }))).toEqual([
        { name: "replayOrReserve", async: false },
        { name: "storeForReplay", async: false },
      ]);
      // Never connects: building the plugins is enough.
      const redis = new RedisConnection("redis://127.0.0.1:9", { timeoutMs: 50 });
      expect(hooks(rateLimit({ store: new RedisRateLimitStore(redis, { perMinute: 20, perDay: 200 }) }))).toEqual([
        { name: "checkSharedRateLimit", async: true },
      ]);
      expect(hooks(idempotency({ store: new RedisIdempotencyStore(redis) }))).toEqual([
        { name: "replayOrReserveShared", async: true },
        { name: "storeForReplayShared", async: true },
      ]);
      redis.close();
    } finally {
      db.close();
    }
  });
});
