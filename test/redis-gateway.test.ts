/**
 * The gateway with HEALTH_REDIS_URL, in process: what its HTTP answers are when Redis goes away
 * in the middle (each concern fails in its safe direction) and that they come back with it.
 */
import { describe, expect, test } from "bun:test";
import { planningBody, postPlan } from "./support/planning.ts";
import { hasRedis, startRedis, warnIfNoRedis } from "./support/redis.ts";
import { join } from "node:path";
import { mintToken, startTestServer } from "./support/server.ts";

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

  test("planning Idempotency-Key lives in Redis; a trigger's stays in the database, in the run's transaction", async () => {
    await using redis = await startRedis();
    await using server = await startTestServer({
      HEALTH_REDIS_URL: redis.url,
      HEALTH_LOOPS_DIR: join(import.meta.dir, "fixtures", "loops"),
    });
    const body = planningBody();
    const first = await postPlan(server.url, server.systemKey, body, { "idempotency-key": "plan-1" });
    const again = await postPlan(server.url, server.systemKey, body, { "idempotency-key": "plan-1" });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("x-health-cache")).toBe(first.headers.get("x-health-cache"));
    expect(await again.text()).toBe(await first.text());
    const keys = (await redis.client().send("KEYS", ["health:idempotency:*"])) as string[];
    expect(keys).toEqual(["health:idempotency:system POST /cli/code/sessions plan-1"]);

    const { token } = mintToken(server, ["loop:run"]);
    const trigger = () =>
      fetch(`${server.url}/loop/${server.defaultOrg.id}/loop_echo`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": "run-1" },
        body: "{}",
      });
    const run = await (await trigger()).json();
    const repeat = await trigger();
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    expect((await repeat.json()).runId).toBe(run.runId);
    expect(((await redis.client().send("KEYS", ["health:idempotency:*"])) as string[]).length).toBe(1);
  });
});
