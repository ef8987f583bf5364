/**
 * The plan cache's storage: a bounded in-memory LRU with per-entry expiry, or Redis shared by
 * every instance (redis-store.ts).
 */
/**
 * `shared` tells the two kinds apart: the in-memory store answers synchronously, so its plugin
 * hooks never wait on it; a shared one (Redis) answers with promises.
 */
export type CacheStore<V> = LocalCacheStore<V> | SharedCacheStore<V>;

export interface LocalCacheStore<V> {
  readonly shared: false;
  get(key: string, nowMs: number): V | undefined;
  set(key: string, value: V, ttlMs: number, nowMs: number): void;
}

export interface SharedCacheStore<V> {
  readonly shared: true;
  /** A store that cannot answer is a miss: never rejects. */
  get(key: string, nowMs: number): Promise<V | undefined>;
  /** Resolves once written, or once the write failed (the next identical request misses): never rejects. */
  set(key: string, value: V, ttlMs: number, nowMs: number): Promise<void>;
}

export class MemoryCacheStore<V> implements LocalCacheStore<V> {
  readonly shared = false;
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(private readonly maxEntries = 10_000) {}

  get(key: string, nowMs: number): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    // Re-insert so Map order tracks recency.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number, nowMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: nowMs + ttlMs });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
