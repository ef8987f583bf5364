/**
 * The plan cache's storage: a bounded in-memory LRU with per-entry expiry, or Redis shared by
 * every instance (redis-store.ts).
 */
export interface CacheStore<V> {
  /**
   * The in-memory store answers synchronously; a shared one with a promise, which the plugin
   * awaits only when it got one (the hit path stays free of awaits in memory).
   */
  get(key: string, nowMs: number): V | undefined | Promise<V | undefined>;
  /** Fire and forget: a write that fails is a later miss, never an error. */
  set(key: string, value: V, ttlMs: number, nowMs: number): void;
}

export class MemoryCacheStore<V> implements CacheStore<V> {
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
