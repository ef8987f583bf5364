/**
 * The planning rate limits in Redis, shared by every instance: the same two fixed windows as the
 * memory store (the current minute and the current UTC day, by the instance's clock, so the
 * instances' clocks must agree: one host, or NTP). One Lua script checks both windows and
 * counts the request in both, or in neither, atomically: concurrent requests on any number of
 * instances never over-admit. Each counter expires a little after its window ends.
 *
 * A Redis that cannot answer rejects with RedisUnavailableError; the plugin refuses the request
 * (503 with Retry-After) rather than admit it uncounted.
 */
import * as v from "valibot";
import type { RedisConnection } from "../../core/redis.ts";
import {
  DAY_MS,
  MINUTE_MS,
  type RateLimitDecision,
  type RateLimits,
  rateLimitDecision,
  type SharedRateLimitStore,
} from "./store.ts";

// KEYS: the minute counter, the day counter. ARGV: per-minute limit, per-day limit, when each
// counter may expire (Unix ms), and "1" to count the request or "0" only to read.
// Sent with EVAL each time rather than EVALSHA: a restarted Redis has forgotten every loaded
// script, and the text is small; Redis caches the compiled script by its hash anyway.
const CONSUME = `
local minute = tonumber(redis.call('GET', KEYS[1]) or '0')
local day = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[5] == '1' and minute < tonumber(ARGV[1]) and day < tonumber(ARGV[2]) then
  minute = redis.call('INCR', KEYS[1])
  if minute == 1 then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
  day = redis.call('INCR', KEYS[2])
  if day == 1 then redis.call('PEXPIREAT', KEYS[2], ARGV[4]) end
  return {1, minute, day}
end
return {0, minute, day}
`;

/** Counters outlive their window by this much, so a clock slightly behind still finds them. */
const EXPIRY_SLACK_MS = 60_000;

const reply = v.tuple([v.picklist([0, 1]), v.number(), v.number()]);

export class RedisRateLimitStore implements SharedRateLimitStore {
  readonly shared = true;

  constructor(
    private readonly redis: RedisConnection,
    private readonly limits: RateLimits,
    private readonly prefix = "health:",
  ) {}

  consume(company: string, nowMs: number): Promise<RateLimitDecision> {
    return this.run(company, nowMs, true);
  }

  peek(company: string, nowMs: number): Promise<RateLimitDecision> {
    return this.run(company, nowMs, false);
  }

  /** Nothing is written behind: Redis has every count already. */
  flush(): void {}

  private async run(company: string, nowMs: number, count: boolean): Promise<RateLimitDecision> {
    const minute = Math.floor(nowMs / MINUTE_MS);
    const day = Math.floor(nowMs / DAY_MS);
    // The braces are a Redis Cluster hash tag: both counters of a company live on one node,
    // as a script touching two keys requires.
    const base = `${this.prefix}rate:{${company}}`;
    const answer = await this.redis.send("EVAL", [
      CONSUME,
      "2",
      `${base}:minute:${minute}`,
      `${base}:day:${day}`,
      String(this.limits.perMinute),
      String(this.limits.perDay),
      String((minute + 1) * MINUTE_MS + EXPIRY_SLACK_MS),
      String((day + 1) * DAY_MS + EXPIRY_SLACK_MS),
      count ? "1" : "0",
    ]);
    const [allowed, minuteUsed, dayUsed] = v.parse(reply, answer);
    return rateLimitDecision(this.limits, count ? allowed === 1 : true, minuteUsed, dayUsed, nowMs);
  }
}
