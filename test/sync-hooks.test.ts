/**
 * What Elysia reads from the planning hooks' source text, which decides what every request pays.
 * The in-process stores keep their hooks synchronous: Elysia awaits a hook when it is an async
 * function or when its source looks like it returns a promise (a `return` of a call, or the
 * words async/await anywhere in it, comments included), and each await costs a turn. Only the
 * shared (Redis) stores get async hooks. And no hook makes Elysia parse the query, headers or
 * cookies (which it does for a hook that names them, or passes its whole context to a function).
 */
import { describe, expect, test } from "bun:test";
import { isAsync } from "elysia/compose";
import { sucrose } from "elysia/sucrose";
import { cache } from "../plugins/cache/index.ts";
import { MemoryCacheStore } from "../plugins/cache/store.ts";
import { RedisCacheStore } from "../plugins/cache/redis-store.ts";
import { planResultCodec } from "../plugins/cache/plan-codec.ts";
import type { PlanResult } from "../http/plan-result.ts";
import { idempotency } from "../plugins/idempotency/index.ts";
import { SqliteIdempotencyStore } from "../plugins/idempotency/store.ts";
import { rateLimit } from "../plugins/rate-limit/index.ts";
import { MemoryRateLimitStore, SqliteDayCounts } from "../plugins/rate-limit/store.ts";
import { openDatabase } from "../server/db.ts";
import { RedisConnection } from "../core/redis.ts";
import { RedisRateLimitStore } from "../plugins/rate-limit/redis-store.ts";
import { RedisIdempotencyStore } from "../plugins/idempotency/redis-store.ts";
import { context } from "../http/context.ts";
import { errorHandler } from "../http/errors.ts";
import { auth } from "../plugins/auth.ts";

type Hook = { fn: (...args: never[]) => unknown };
const KINDS = ["parse", "transform", "beforeHandle", "afterHandle", "mapResponse"] as const;

/** The plugin's own hooks (not the shared context's). */
function ownHooks(plugin: unknown): Array<{ kind: (typeof KINDS)[number]; hook: Hook }> {
  const events = (plugin as { event: Record<string, Hook[] | undefined> }).event;
  return KINDS.flatMap((kind) =>
    (events[kind] ?? []).filter((hook) => hook.fn.name !== "addServerTiming").map((hook) => ({ kind, hook })),
  );
}

function hooks(plugin: unknown): Array<{ name: string; async: boolean }> {
  return ownHooks(plugin)
    .filter(({ kind }) => kind !== "afterHandle")
    .map(({ hook }) => ({ name: hook.fn.name, async: isAsync(hook.fn) }));
}

/** The request parts Elysia will parse for the plugin's hooks, besides the body. */
function parsed(plugin: unknown): string[] {
  const parts = new Set<string>();
  for (const { kind, hook } of ownHooks(plugin)) {
    const inference = sucrose({ [kind]: [hook] } as Parameters<typeof sucrose>[0]);
    for (const part of ["query", "headers", "cookie"] as const) if (inference[part]) parts.add(part);
  }
  return [...parts];
}

describe("planning hooks over in-process stores", () => {
  test("auth, rate limit, idempotency and cache-write hooks are synchronous for Elysia; the shared variants are async", () => {
    const db = openDatabase(":memory:");
    try {
      const memory = new MemoryRateLimitStore({ perMinute: 20, perDay: 200 }, new SqliteDayCounts(db.sqlite));
      const sqlite = new SqliteIdempotencyStore(db.sqlite);
      expect(hooks(rateLimit({ store: memory }))).toEqual([{ name: "checkRateLimit", async: false }]);
      // Auth over a lookup that answers at once (SQLite); over PostgreSQL the same pair is async.
      expect(hooks(auth({ authenticate: () => null, action: () => ({ kind: "cli:run" }) }))).toEqual([
        { name: "identifyBeforeParsing", async: false },
        { name: "authorizeCaller", async: false },
      ]);
      expect(hooks(auth({ async: true, authenticate: async () => null, action: () => ({ kind: "cli:run" }) }))).toEqual(
        [
          { name: "identifyBeforeParsingAsync", async: true },
          { name: "authorizeCallerAsync", async: true },
        ],
      );
      expect(hooks(idempotency({ store: sqlite }))).toEqual([
        { name: "replayOrReserve", async: false },
        { name: "storeForReplay", async: false },
      ]);
      // The cache's lookup was always async (it may wait for a coalesced flight); its write is not.
      expect(
        ownHooks(cache({ store: new MemoryCacheStore<PlanResult>(), ttlMs: 1_000, model: "m" })).map(({ hook }) => ({
          name: hook.fn.name,
          async: isAsync(hook.fn),
        })),
      ).toEqual([
        { name: "serveFromCache", async: true },
        { name: "fillCache", async: false },
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
      expect(
        ownHooks(cache({ store: new RedisCacheStore(redis, planResultCodec), ttlMs: 1_000, model: "m" })).map(
          ({ hook }) => hook.fn.name,
        ),
      ).toEqual(["serveFromCache", "fillSharedCache"]);
      redis.close();
    } finally {
      db.close();
    }
  });

  test("no hook of auth, rate limit, idempotency or cache makes Elysia parse the query, headers or cookies", () => {
    const db = openDatabase(":memory:");
    const redis = new RedisConnection("redis://127.0.0.1:9", { timeoutMs: 50 });
    try {
      const plugins = [
        rateLimit({ store: new MemoryRateLimitStore({ perMinute: 20, perDay: 200 }, new SqliteDayCounts(db.sqlite)) }),
        rateLimit({ store: new RedisRateLimitStore(redis, { perMinute: 20, perDay: 200 }) }),
        idempotency({ store: new SqliteIdempotencyStore(db.sqlite) }),
        idempotency({ store: new RedisIdempotencyStore(redis) }),
        cache({ store: new MemoryCacheStore<PlanResult>(), ttlMs: 1_000, model: "m" }),
        cache({ store: new RedisCacheStore(redis, planResultCodec), ttlMs: 1_000, model: "m" }),
        auth({ authenticate: () => null, action: () => ({ kind: "cli:run" }) }),
        auth({ async: true, authenticate: async () => null, action: () => ({ kind: "cli:run" }) }),
      ];
      for (const plugin of plugins) expect(parsed(plugin)).toEqual([]);
    } finally {
      redis.close();
      db.close();
    }
  });
});

describe("global hooks", () => {
  test("Server-Timing, request state and the error renderer make Elysia parse no query, headers or cookies", () => {
    const inferred: Record<string, string[]> = {};
    for (const plugin of [context, errorHandler]) {
      const events = (plugin as unknown as { event: Record<string, Hook[] | undefined> }).event;
      for (const [kind, list] of Object.entries(events)) {
        for (const hook of list ?? []) {
          const inference = sucrose({ [kind]: [hook] } as Parameters<typeof sucrose>[0]);
          inferred[hook.fn.name] = (["query", "headers", "cookie"] as const).filter((part) => inference[part]);
        }
      }
    }
    expect(inferred).toEqual({ createRequestState: [], addServerTiming: [], renderProblem: [] });
  });
});
