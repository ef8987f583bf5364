/**
 * rate-limit: per company, both windows (docs/interface.md §8: 20 per minute, 200 per day by default).
 * Every response behind it carries the IETF httpapi RateLimit-Policy and RateLimit headers;
 * a rejection is 429 with Retry-After. With a shared store (Redis) that cannot answer, the
 * request is refused with 503 and Retry-After: never admitted without being counted.
 */
import { Elysia } from "elysia";
import { HttpProblem, unavailable } from "../../http/problem.ts";
import type { RateLimitDecision, RateLimitStore } from "./store.ts";
import { context, instanceSeed, type RequestState } from "../../http/context.ts";
import { REDIS_RETRY_AFTER_SECONDS, RedisUnavailableError } from "../../core/redis.ts";

export interface RateLimitOptions {
  store: RateLimitStore;
  now?: () => number;
}

/** The policy of the last limits seen: the same string for every response while they hold. */
let policy = { minute: -1, day: -1, text: "" };

/** Structured-field headers of draft-ietf-httpapi-ratelimit-headers. */
export function rateLimitHeaders(d: RateLimitDecision): {
  "ratelimit-policy": string;
  ratelimit: string;
  "retry-after"?: string;
} {
  if (policy.minute !== d.minute.limit || policy.day !== d.day.limit) {
    const text = `"minute";q=${d.minute.limit};w=60, "day";q=${d.day.limit};w=86400`;
    policy = { minute: d.minute.limit, day: d.day.limit, text };
  }
  return {
    "ratelimit-policy": policy.text,
    ratelimit: `"minute";r=${d.minute.remaining};t=${d.minute.resetSeconds}, "day";r=${d.day.remaining};t=${d.day.resetSeconds}`,
  };
}

function retryAfterSeconds(d: RateLimitDecision): number {
  if (d.minute.remaining === 0 && d.day.remaining === 0) return Math.max(d.minute.resetSeconds, d.day.resetSeconds);
  return d.day.remaining === 0 ? d.day.resetSeconds : d.minute.resetSeconds;
}

export const rateLimit = (options: RateLimitOptions) => {
  const now = options.now ?? Date.now;
  const store = options.store;

  /** Sets the headers of an admitted request, or throws the 429. */
  function enforce(decision: RateLimitDecision, set: { headers: Record<string, unknown> }): void {
    const headers = rateLimitHeaders(decision);
    if (!decision.allowed) {
      headers["retry-after"] = String(retryAfterSeconds(decision));
      throw new HttpProblem("rate_limited", "Rate limit exceeded for this company; retry after the indicated time", {
        headers,
      });
    }
    set.headers["ratelimit-policy"] = headers["ratelimit-policy"];
    set.headers.ratelimit = headers.ratelimit;
  }

  function companyOf(state: RequestState): string {
    if (state.company === undefined) throw new HttpProblem("internal", "rate-limit ran before auth");
    return state.company;
  }

  const plugin = new Elysia({ name: "health.rate-limit", seed: instanceSeed() }).use(context);
  // Elysia awaits a hook only when it is an async function, and every await costs the request a
  // turn: the in-memory store keeps a synchronous hook, a shared store gets an async one.
  if (!store.shared) {
    return plugin.derive({ as: "scoped" }, function checkRateLimit({ state, set }) {
      const started = performance.now();
      try {
        enforce(store.consume(companyOf(state), now()), set);
      } finally {
        state.record("rate-limit", performance.now() - started);
      }
      return {};
    });
  }
  return plugin.derive({ as: "scoped" }, async function checkSharedRateLimit({ state, set }) {
    const started = performance.now();
    try {
      enforce(await store.consume(companyOf(state), now()), set);
    } catch (error) {
      // Without the shared count a request cannot be counted: refuse rather than admit it unlimited.
      if (error instanceof RedisUnavailableError) {
        throw unavailable("The rate limiter cannot reach its store; retry shortly", REDIS_RETRY_AFTER_SECONDS);
      }
      throw error;
    } finally {
      state.record("rate-limit", performance.now() - started);
    }
    return {};
  });
};
