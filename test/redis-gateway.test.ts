/**
 * The gateway with HEALTH_REDIS_URL, in process: what its HTTP answers are when Redis goes away
 * in the middle (each concern fails in its safe direction) and that they come back with it.
 */
import { describe, expect, test } from "bun:test";
import { planningBody, postPlan } from "./support/planning.ts";
import { hasRedis, startRedis, warnIfNoRedis } from "./support/redis.ts";
import { startTestServer } from "./support/server.ts";

warnIfNoRedis("the gateway's Redis tests");

/** Repeats `call` until `ok` holds for its answer, or fails after `withinMs`. */
async function eventually(call: () => Promise<Response>, ok: (r: Response) => boolean, withinMs = 5_000) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const response = await call();
    if (ok(response) || Date.now() > deadline) return response;
    await Bun.sleep(50);
  }
}

describe.skipIf(!hasRedis)("gateway on Redis", () => {
  test("planning rate limit: Redis down is 503 with Retry-After (never admitted uncounted); back, it counts again", async () => {
    await using redis = await startRedis();
    await using server = await startTestServer({ HEALTH_REDIS_URL: redis.url, HEALTH_REDIS_TIMEOUT_MS: "300" });
    expect(server.logs).toContain(`Shared state: Redis at 127.0.0.1:${redis.port}`);
    const plan = () => postPlan(server.url, server.systemKey, planningBody(), { "x-service-company": "acme" });
    const first = await plan();
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit")).toMatch(/^"minute";r=19;t=\d+, "day";r=199;t=\d+$/);

    await redis.stop();
    const refused = await plan();
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toMatchObject({ code: "unavailable", status: 503 });
    const account = await fetch(`${server.url}/cli/account`, {
      headers: { authorization: `Bearer ${server.systemKey}` },
    });
    expect(account.status).toBe(503);

    await redis.start();
    const back = await eventually(plan, (r) => r.status === 200);
    expect(back.status).toBe(200);
    // The restarted Redis kept nothing (no persistence in tests): the count starts over.
    expect(back.headers.get("ratelimit")).toMatch(/^"minute";r=19;/);
  });
});
