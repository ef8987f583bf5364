/**
 * Sliding-window counts in Redis, shared by every instance: one sorted set of event times per
 * key, trimmed to the window and expiring with it. Checking and recording happen in one Lua
 * script, so `take` admits exactly `max` across instances. Keys are stored as their SHA-256:
 * email addresses and client addresses do not sit in Redis in clear.
 *
 * Rejects with RedisUnavailableError when Redis cannot answer; the limiters' callers refuse the
 * request (503 with Retry-After) rather than let it through unthrottled.
 */
import { sha256Hex } from "../../core/hash.ts";
import type { RedisConnection } from "../../core/redis.ts";
import type { EventWindow } from "./sliding-window.ts";

// KEYS[1]: the key's event times. ARGV: now, the cutoff (events at or before it have left the
// window), the window in ms, the most events allowed ("0": no check, always record), a member.
const RECORD = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if ARGV[4] ~= '0' and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

export class RedisSlidingWindow implements EventWindow {
  constructor(
    private readonly redis: RedisConnection,
    /** Names this window's keys apart from the others (`health:login:`). */
    private readonly prefix: string,
    readonly max: number,
    readonly windowMs: number,
  ) {}

  async full(key: string, now = Date.now()): Promise<boolean> {
    const inWindow = await this.redis.send("ZCOUNT", [this.redisKey(key), `(${now - this.windowMs}`, "+inf"]);
    return Number(inWindow) >= this.max;
  }

  async add(key: string, now = Date.now()): Promise<void> {
    await this.record(key, now, false);
  }

  take(key: string, now = Date.now()): Promise<boolean> {
    return this.record(key, now, true);
  }

  async forget(key: string): Promise<void> {
    await this.redis.send("DEL", [this.redisKey(key)]);
  }

  private async record(key: string, now: number, limited: boolean): Promise<boolean> {
    const recorded = await this.redis.send("EVAL", [
      RECORD,
      "1",
      this.redisKey(key),
      String(now),
      String(now - this.windowMs),
      String(this.windowMs),
      limited ? String(this.max) : "0",
      // Members of a sorted set are unique: two events in the same millisecond are two members.
      `${now}:${crypto.randomUUID()}`,
    ]);
    return recorded === 1;
  }

  private redisKey(key: string): string {
    return this.prefix + sha256Hex(key);
  }
}
