/**
 * Several instances, as an operator would run them: three real server processes
 * (`bun server/main.ts`) on one database and one Redis, the database being one SQLite file (one
 * host) or one PostgreSQL (several hosts). What one instance counts, caches, stores or revokes,
 * the others see on the next request; runs triggered on any of them complete once, a killed one's
 * included.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { planningBody, postPlan } from "./support/planning.ts";
import { hasPostgres, startPostgres, type TestPostgres, warnIfNoPostgres } from "./support/postgres.ts";
import { hasRedis, startRedis, type TestRedis, warnIfNoRedis } from "./support/redis.ts";
import { type ServerProcess, startServerProcess } from "./support/server-process.ts";
import { tempDir } from "./support/temp-dir.ts";
import { lineCounts } from "./support/loops.ts";
import { adminEnv, signIn } from "./support/trpc.ts";

warnIfNoRedis("the three-instance tests");
warnIfNoPostgres("the three-instance test on PostgreSQL");

const SYSTEM_KEY = "instances-test-system-key-0123456789";
const PER_MINUTE = 20;

const DATABASES = [
  { name: "one SQLite file", postgres: false, skip: !hasRedis },
  { name: "one PostgreSQL", postgres: true, skip: !hasRedis || !hasPostgres },
];

describe.each(DATABASES)("three instances on $name and one Redis", ({ postgres, skip }) => {
  if (skip) {
    test.skip("needs redis-server (and PostgreSQL for its half)", () => {});
    return;
  }
  let dir: string & Disposable;
  let redis: TestRedis;
  let pg: TestPostgres | undefined;
  let instances: ServerProcess[] = [];
  const url = (i: number) => instances[i % instances.length]?.url ?? "";

  beforeAll(async () => {
    dir = tempDir("health-instances-");
    redis = await startRedis();
    pg = postgres ? await startPostgres() : undefined;
    const env = {
      ...adminEnv,
      HEALTH_DATABASE_URL: pg === undefined ? `file:${join(dir, "health.db")}` : await pg.createDatabase(),
      HEALTH_SYSTEM_KEY: SYSTEM_KEY,
      HEALTH_LOOPS_DIR: join(import.meta.dir, "fixtures", "loops"),
      HEALTH_LOOP_THREADS: "1",
      HEALTH_REDIS_URL: redis.url,
      HEALTH_RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
      HEALTH_RATE_LIMIT_PER_DAY: "1000",
    };
    if (pg === undefined) {
      // One after the other: the first creates and migrates the file, the others find it ready.
      for (const name of ["a", "b", "c"]) instances.push(await startServerProcess(dir, name, env));
    } else {
      // All at once, as a deployment starts them: one migrates, one makes the organization.
      instances = await Promise.all(["a", "b", "c"].map((name) => startServerProcess(dir, name, env)));
    }
  }, 60_000);

  afterAll(async () => {
    for (const instance of instances) await instance[Symbol.asyncDispose]();
    instances = [];
    await redis?.[Symbol.asyncDispose]();
    await pg?.[Symbol.asyncDispose]();
    dir?.[Symbol.dispose]();
  });

  test("each instance says where its shared state is", () => {
    for (const instance of instances) {
      expect(instance.output()).toContain(`Shared state: Redis at 127.0.0.1:${redis.port}`);
      expect(instance.output()).toContain(
        postgres ? "Database: PostgreSQL at 127.0.0.1:" : "Database: the SQLite file",
      );
    }
  });

  test(`the planning rate limit admits exactly ${PER_MINUTE} across the three under concurrent load`, async () => {
    // All requests must fall in one minute window, or two windows would each admit 20. A burst
    // takes well under a second here; when fewer than 5 s are left in this minute, wait for the
    // next. The admitted answers' remaining counts (below) would show a second window anyway.
    const leftMs = 60_000 - (Date.now() % 60_000);
    if (leftMs < 5_000) await Bun.sleep(leftMs + 100);
    const responses = await Promise.all(
      Array.from({ length: 3 * PER_MINUTE }, (_, i) =>
        postPlan(url(i), SYSTEM_KEY, planningBody({ redacted_prompt: `build an intake agent number ${i}` }), {
          "x-service-company": "load-test",
        }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length).toBe(PER_MINUTE);
    expect(statuses.filter((s) => s === 429).length).toBe(2 * PER_MINUTE);
    // Counted atomically in one window: each admitted request saw its own remaining count.
    const remaining = responses
      .filter((r) => r.status === 200)
      .map((r) => Number(/"minute";r=(\d+);/.exec(r.headers.get("ratelimit") ?? "")?.[1]))
      .sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: PER_MINUTE }, (_, i) => i));
    const refused = responses.find((r) => r.status === 429);
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused?.headers.get("ratelimit")).toMatch(/^"minute";r=0;/);
    for (const response of responses) await response.arrayBuffer();
  });

  test("a cache miss on one instance is a hit on the others", async () => {
    const body = planningBody({ redacted_prompt: "build a fax intake agent for the billing team" });
    const headers = { "x-service-company": "cache-test" };
    const first = await postPlan(url(0), SYSTEM_KEY, body, headers);
    expect(first.headers.get("x-health-cache")).toBe("miss");
    const plan = await first.json();
    for (const i of [1, 2]) {
      const again = await postPlan(url(i), SYSTEM_KEY, body, headers);
      expect(again.headers.get("x-health-cache")).toBe("hit");
      const answer = await again.json();
      // The same plan, with its own audit id.
      expect({ ...answer, audit_id: "" }).toEqual({ ...plan, audit_id: "" });
      expect(answer.audit_id).not.toBe(plan.audit_id);
    }
  });

  test("an Idempotency-Key replays from any instance; concurrent repeats never run twice", async () => {
    const body = planningBody({ redacted_prompt: "build an email intake agent" });
    const headers = { "x-service-company": "idempotency-test", "idempotency-key": crypto.randomUUID() };
    const first = await postPlan(url(1), SYSTEM_KEY, body, headers);
    expect(first.status).toBe(200);
    const text = await first.text();
    for (const i of [2, 0]) {
      const again = await postPlan(url(i), SYSTEM_KEY, body, headers);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await again.text()).toBe(text);
    }
    const other = await postPlan(url(2), SYSTEM_KEY, planningBody(), headers);
    expect(other.status).toBe(409);

    const raceHeaders = { ...headers, "idempotency-key": crypto.randomUUID() };
    const race = await Promise.all(
      Array.from({ length: 9 }, (_, i) => postPlan(url(i), SYSTEM_KEY, body, raceHeaders)),
    );
    const ran = race.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === null);
    expect(ran.length).toBe(1);
    for (const r of race) expect([200, 409]).toContain(r.status);
    const auditIds = new Set(
      await Promise.all(race.filter((r) => r.status === 200).map(async (r) => (await r.json()).audit_id)),
    );
    expect(auditIds.size).toBe(1);
    for (const r of race) if (!r.bodyUsed) await r.arrayBuffer();
  });

  test("a token revoked on one instance is refused by all three on the next request", async () => {
    const { client } = await signIn(url(0));
    const created = await client.tokens.create.mutate({ name: "shared", scopes: ["cli:run"] });
    const account = (i: number) =>
      fetch(`${url(i)}/cli/account`, { headers: { authorization: `Bearer ${created.token}` } }).then((r) => r.status);
    expect([await account(0), await account(1), await account(2)]).toEqual([200, 200, 200]);
    const { client: onB } = await signIn(url(1));
    await onB.tokens.revoke.mutate({ id: created.id });
    expect([await account(2), await account(0), await account(1)]).toEqual([401, 401, 401]);
  });

  // Last: it kills an instance.
  test("300 triggers spread over the three all complete; kill -9 of one mid-load loses nothing", async () => {
    const { client } = await signIn(url(0));
    const { token } = await client.tokens.create.mutate({ name: "spread", scopes: ["loop:run"] });
    const orgId = (await client.auth.me.query()).org.id;
    const logFile = join(`${dir}`, "spread.log");
    const trigger = async (i: number, at: string): Promise<string | undefined> => {
      try {
        const response = await fetch(`${at}/loop/${orgId}/loop_logger`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ logFile, tag: `r${i}`, steps: 2, stepDelayMs: 20 }),
        });
        return response.status === 202 ? ((await response.json()) as { runId: string }).runId : undefined;
      } catch {
        return undefined; // the killed instance refuses the connection
      }
    };
    const accepted = new Map<number, string>();
    const victim = instances[2];
    for (let from = 0; from < 300; from += 30) {
      if (from === 120) await victim?.kill(); // mid-load: some of its runs are executing
      const batch = Array.from({ length: 30 }, (_, k) => from + k);
      const alive = from >= 120 ? 2 : 3;
      const ids = await Promise.all(batch.map((i) => trigger(i, url(i % alive))));
      batch.forEach((i, k) => {
        const id = ids[k];
        if (id !== undefined) accepted.set(i, id);
      });
    }
    // Every trigger was answered 202 by a live instance, before or after the kill.
    expect(accepted.size).toBe(300);
    expect(new Set(accepted.values()).size).toBe(300);

    // The survivors finish every run, the killed instance's included (a dead pid on this host
    // frees its leases at once).
    const deadline = Date.now() + 60_000;
    const status = async (runId: string) => {
      const response = await fetch(`${url(0)}/loop/${orgId}/loop_logger/runs/${runId}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return (await response.json()) as { status: string; attempts: number };
    };
    let runs: Array<{ status: string; attempts: number }> = [];
    for (;;) {
      runs = await Promise.all([...accepted.values()].map(status));
      if (runs.every((run) => run.status === "complete") || Date.now() > deadline) break;
      await Bun.sleep(250);
    }
    expect(runs.filter((run) => run.status !== "complete")).toEqual([]);

    // Every step ran; a step ran twice only in a run the killed instance had claimed (the step in
    // flight when it died, whose completion it never wrote), and never more than twice.
    const counts = lineCounts(logFile);
    const tags = [...accepted.keys()];
    for (const i of tags)
      for (const stepIndex of [0, 1]) expect(counts.get(`r${i} step-${stepIndex}`) ?? 0).toBeGreaterThan(0);
    const twice = [...counts].filter(([, n]) => n > 1);
    for (const [, n] of twice) expect(n).toBe(2);
    for (const [line] of twice) {
      const i = Number(/^r(\d+) /.exec(line)?.[1]);
      const run = runs[tags.indexOf(i)];
      expect(run?.attempts).toBeGreaterThan(1);
    }
  }, 120_000);
});
