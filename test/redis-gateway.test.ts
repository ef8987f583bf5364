/**
 * The gateway with HEALTH_REDIS_URL, in process: what its HTTP answers are when Redis goes away
 * in the middle (each concern fails in its safe direction) and that they come back with it.
 */
import { describe, expect, test } from "bun:test";
import { planningBody, postPlan } from "./support/planning.ts";
import { hasRedis, startRedis, warnIfNoRedis } from "./support/redis.ts";
import { join } from "node:path";
import { mintToken, startTestServer, tempDir } from "./support/server.ts";
import { ADMIN, adminEnv, trpcClient } from "./support/trpc.ts";

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

  test("sign-in and device-link throttles are shared by two instances; Redis down is 503 with Retry-After", async () => {
    await using redis = await startRedis();
    using dir = tempDir();
    const env = { ...adminEnv, HEALTH_REDIS_URL: redis.url, HEALTH_REDIS_TIMEOUT_MS: "300" };
    await using a = await startTestServer(env, dir);
    await using b = await startTestServer(env, dir);
    const failure = (call: Promise<unknown>) =>
      call.then(
        () => undefined,
        (error: { data?: { code?: string } }) => error.data?.code,
      );
    const wrong = { email: ADMIN.email, password: "not the password" };
    for (let i = 0; i < 5; i++) {
      expect(await failure(trpcClient(i % 2 === 0 ? a.url : b.url).auth.login.mutate(wrong))).toBe("UNAUTHORIZED");
    }
    // The sixth attempt, right password or not, is refused wherever it lands.
    expect(await failure(trpcClient(b.url).auth.login.mutate(ADMIN))).toBe("TOO_MANY_REQUESTS");
    expect(await failure(trpcClient(a.url).auth.login.mutate(ADMIN))).toBe("TOO_MANY_REQUESTS");

    const starts = [];
    for (let i = 0; i < 11; i++)
      starts.push(await failure(trpcClient(i % 2 === 0 ? a.url : b.url).device.start.mutate({})));
    expect(starts).toEqual([...Array.from({ length: 10 }, () => undefined), "TOO_MANY_REQUESTS"]);

    await redis.stop();
    for (const [path, input] of [
      ["auth.login", ADMIN],
      ["device.start", {}],
    ] as const) {
      const response = await fetch(`${a.url}/trpc/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(input),
      });
      expect({ path, status: response.status, retryAfter: response.headers.get("retry-after") }).toEqual({
        path,
        status: 503,
        retryAfter: "1",
      });
      expect((await response.json()).error.data.code).toBe("SERVICE_UNAVAILABLE");
    }
    await redis.start();
    // Back, and empty (no persistence in tests): the admin signs in again.
    const back = await eventually(
      () =>
        fetch(`${b.url}/trpc/auth.login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(ADMIN),
        }),
      (r) => r.status !== 503,
    );
    expect(back.status).toBe(200);
  });
});

describe.skipIf(!hasRedis)("readiness with Redis", () => {
  test("/readyz is 503 while Redis is away and 200 when it is back; /healthz stays 200 and says which", async () => {
    await using redis = await startRedis();
    await using server = await startTestServer({ HEALTH_REDIS_URL: redis.url, HEALTH_REDIS_TIMEOUT_MS: "300" });
    const get = (path: string) => fetch(`${server.url}${path}`);
    const ready = await get("/readyz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ok", database: "ok", redis: "ok" });

    await redis.stop();
    const away = await get("/readyz");
    expect(away.status).toBe(503);
    expect(await away.json()).toMatchObject({ status: "degraded", database: "ok", redis: "unavailable" });
    const alive = await get("/healthz");
    expect(alive.status).toBe(200);
    expect(await alive.json()).toMatchObject({ status: "degraded", redis: "unavailable" });

    await redis.start();
    const back = await eventually(
      () => get("/readyz"),
      (r) => r.status === 200,
    );
    expect(back.status).toBe(200);
  });
});
