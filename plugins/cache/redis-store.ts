/**
 * The plan cache in Redis, shared by every instance: the SHA-256 of the plugin's key (the
 * canonical text of company, prompt, intent, manifest and model) under a prefix, values as JSON, expiry by Redis
 * (`SET … PX`, the same TTL). Only the in-process coalescing of identical misses stays per
 * instance: two instances missing the same key at the same moment both call the upstream.
 *
 * A Redis that cannot answer is a miss, and the write after it is skipped: the request goes to
 * the planner as if nothing were cached, which is slower but never wrong. The plugin waits for
 * a write before the answer leaves (at most the command deadline), so the same request sent
 * next to any instance is a hit.
 */
import { sha256Hex } from "../../core/hash.ts";
import type { RedisConnection } from "../../core/redis.ts";
import { MemoryCacheStore, type SharedCacheStore } from "./store.ts";

/** How values become text in Redis and back; `decode` answers undefined for what it cannot read. */
export interface CacheCodec<V> {
  encode(value: V): string;
  decode(text: string): V | undefined;
}

/** Decoded values kept per instance; Redis is still asked every time, so expiry holds. */
const DECODED_ENTRIES = 1_000;
const DECODED_TTL_MS = 10 * 60 * 1000;

export class RedisCacheStore<V> implements SharedCacheStore<V> {
  readonly shared = true;
  private readonly decoded = new MemoryCacheStore<{ text: string; value: V }>(DECODED_ENTRIES);

  constructor(
    private readonly redis: RedisConnection,
    private readonly codec: CacheCodec<V>,
    private readonly prefix = "health:plan:",
  ) {}

  async get(key: string): Promise<V | undefined> {
    let text: unknown;
    try {
      text = await this.redis.send("GET", [this.prefix + sha256Hex(key)]);
    } catch {
      // Unavailable, or any other failure: a cache that cannot answer is a miss.
      return undefined;
    }
    if (typeof text !== "string") return undefined;
    // The same text decodes to the same object, which keeps what was derived from it (the
    // sanitized, serialized answer) instead of gating and serializing the plan again per hit.
    const known = this.decoded.get(key, Date.now());
    if (known?.text === text) return known.value;
    const value = this.codec.decode(text);
    if (value !== undefined) this.decoded.set(key, { text, value }, DECODED_TTL_MS, Date.now());
    return value;
  }

  async set(key: string, value: V, ttlMs: number): Promise<void> {
    const text = this.codec.encode(value);
    try {
      await this.redis.send("SET", [this.prefix + sha256Hex(key), text, "PX", String(ttlMs)]);
      // This instance's next hits get the very object it answered with, already serialized.
      this.decoded.set(key, { text, value }, DECODED_TTL_MS, Date.now());
    } catch {
      // Not stored: the next identical request is a miss, nothing worse.
    }
  }
}
