/**
 * rate-limit: per company, both windows (docs/interface.md §8: 20 per minute, 200 per day by default).
 * Every response behind it carries the IETF httpapi RateLimit-Policy and RateLimit headers;
 * a rejection is 429 with Retry-After.
 */
import { Elysia } from "elysia";
import { HttpProblem } from "../../http/problem.ts";
import type { RateLimitDecision, RateLimitStore } from "./store.ts";
import { context, instanceSeed } from "../../http/context.ts";

export interface RateLimitOptions {
  store: RateLimitStore;
  now?: () => number;
}

/** Structured-field headers of draft-ietf-httpapi-ratelimit-headers. */
export function rateLimitHeaders(d: RateLimitDecision): {
  "ratelimit-policy": string;
  ratelimit: string;
  "retry-after"?: string;
} {
  return {
    "ratelimit-policy": `"minute";q=${d.minute.limit};w=60, "day";q=${d.day.limit};w=86400`,
    ratelimit: `"minute";r=${d.minute.remaining};t=${d.minute.resetSeconds}, "day";r=${d.day.remaining};t=${d.day.resetSeconds}`,
  };
}

function retryAfterSeconds(d: RateLimitDecision): number {
  if (d.minute.remaining === 0 && d.day.remaining === 0) return Math.max(d.minute.resetSeconds, d.day.resetSeconds);
  return d.day.remaining === 0 ? d.day.resetSeconds : d.minute.resetSeconds;
}

export const rateLimit = (options: RateLimitOptions) => {
  const now = options.now ?? Date.now;
  return new Elysia({ name: "health.rate-limit", seed: instanceSeed() })
    .use(context)
    .derive({ as: "scoped" }, function checkRateLimit({ state, set }) {
      const started = performance.now();
      try {
        const company = state.company;
        if (company === undefined) throw new HttpProblem("internal", "rate-limit ran before auth");
        const decision = options.store.consume(company, now());
        const headers = rateLimitHeaders(decision);
        if (!decision.allowed) {
          headers["retry-after"] = String(retryAfterSeconds(decision));
          throw new HttpProblem(
            "rate_limited",
            "Rate limit exceeded for this company; retry after the indicated time",
            {
              headers,
            },
          );
        }
        set.headers["ratelimit-policy"] = headers["ratelimit-policy"];
        set.headers.ratelimit = headers.ratelimit;
      } finally {
        state.record("rate-limit", performance.now() - started);
      }
      return {};
    });
};
