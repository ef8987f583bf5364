/**
 * The plan cache in Redis, shared by every instance: the same keys (the plugin's SHA-256 of
 * company, prompt, intent, manifest and model) under a prefix, values as JSON, expiry by Redis
 * (`SET … PX`, the same TTL). Only the in-process coalescing of identical misses stays per
 * instance: two instances missing the same key at the same moment both call the upstream.
 *
 * A Redis that cannot answer is a miss, and the write after it is skipped: the request goes to
 * the planner as if nothing were cached, which is slower but never wrong. The plugin waits for
 * a write before the answer leaves (at most the command deadline), so the same request sent
 * next to any instance is a hit.
 */
import type { RedisConnection } from "../../core/redis.ts";
import type { SharedCacheStore } from "./store.ts";

/** How values become text in Redis and back; `decode` answers undefined for what it cannot read. */
export interface CacheCodec<V> {
  encode(value: V): string;
  decode(text: string): V | undefined;
}

export class RedisCacheStore<V> implements SharedCacheStore<V> {
  readonly shared = true;
  constructor(
    private readonly redis: RedisConnection,
    private readonly codec: CacheCodec<V>,
    private readonly prefix = "health:plan:",
  ) {}

  async get(key: string): Promise<V | undefined> {
    try {
      const text = await this.redis.send("GET", [this.prefix + key]);
      return typeof text === "string" ? this.codec.decode(text) : undefined;
    } catch {
      // Unavailable, or any other failure: a cache that cannot answer is a miss.
      return undefined;
    }
  }

  async set(key: string, value: V, ttlMs: number): Promise<void> {
    try {
      await this.redis.send("SET", [this.prefix + key, this.codec.encode(value), "PX", String(ttlMs)]);
    } catch {
      // Not stored: the next identical request is a miss, nothing worse.
    }
  }
}
