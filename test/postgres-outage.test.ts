/**
 * An outage of PostgreSQL under a running server (`bun server/main.ts` on postgres://, no Redis):
 * while the database is down, /readyz says so within seconds, a request behind an API token and an
 * admin (tRPC) call are refused with 503 and Retry-After (a token's revocation, a session, cannot
 * be checked), and the process stays up;
 * when the database is back, the same server answers and runs loops again, with nothing restarted.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { hasPostgres, startPostgres, type TestPostgres, warnIfNoPostgres } from "./support/postgres.ts";
import { type ServerProcess, startServerProcess } from "./support/server-process.ts";
import { tempDir } from "./support/temp-dir.ts";
import { adminEnv, signIn } from "./support/trpc.ts";

warnIfNoPostgres("the PostgreSQL outage test");

/** Polls `probe` until it returns true; fails with `what` after `ms`. */
async function until(what: string, probe: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

describe.skipIf(!hasPostgres)("a PostgreSQL outage under a running server", () => {
  let dir: string & Disposable;
  let pg: TestPostgres;
  let server: ServerProcess;
  let token: string;
  let orgId: string;
  let admin: Awaited<ReturnType<typeof signIn>>;

  beforeAll(async () => {
    dir = tempDir("health-pg-outage-");
    pg = await startPostgres();
    server = await startServerProcess(dir, "server", {
      ...adminEnv,
      HEALTH_DATABASE_URL: await pg.createDatabase(),
      HEALTH_SYSTEM_KEY: "outage-test-system-key-0123456789",
      HEALTH_LOOPS_DIR: join(import.meta.dir, "fixtures", "loops"),
      HEALTH_LOOP_THREADS: "1",
    });
    admin = await signIn(server.url);
    token = (await admin.client.tokens.create.mutate({ name: "outage", scopes: ["loop:run", "cli:run"] })).token;
    orgId = (await admin.client.auth.me.query()).org.id;
  }, 60_000);

  afterAll(async () => {
    await server?.[Symbol.asyncDispose]();
    await pg?.[Symbol.asyncDispose]();
    dir?.[Symbol.dispose]();
  });

  const headers = () => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
  const ready = async () => (await fetch(`${server.url}/readyz`)).status;
  async function runToCompletion(): Promise<void> {
    const response = await fetch(`${server.url}/loop/${orgId}/loop_echo`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ hello: "again" }),
    });
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };
    await until(`run ${runId} to complete`, async () => {
      const run = await fetch(`${server.url}/loop/${orgId}/loop_echo/runs/${runId}`, { headers: headers() });
      return ((await run.json()) as { status: string }).status === "complete";
    });
  }

  test("down: not ready, 503 with Retry-After behind a token, the process up; back: everything answers", async () => {
    expect(await ready()).toBe(200);
    await runToCompletion();

    await pg.stop();
    await until("/readyz to say not ready", async () => (await ready()) === 503, 10_000);
    const refused = await fetch(`${server.url}/cli/account`, { headers: headers() });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await refused.json()) as { code: string }).code).toBe("unavailable");
    // The admin API too: 503 with Retry-After (the console and the CLI say to retry), not a 500.
    const adminCall = await fetch(`${server.url}/trpc/tokens.list`, {
      headers: { authorization: `Bearer ${admin.session}` },
    });
    expect(adminCall.status).toBe(503);
    expect(adminCall.headers.get("retry-after")).toBe("1");
    expect(JSON.stringify(await adminCall.json())).toContain("SERVICE_UNAVAILABLE");
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "degraded", database: "unavailable" });
    // The engine's polls and heartbeats fail meanwhile: nothing unhandled ends the process.
    await Bun.sleep(2_000);
    expect(await ready()).toBe(503);

    await pg.start();
    await until("/readyz to say ready again", async () => (await ready()) === 200);
    expect((await fetch(`${server.url}/cli/account`, { headers: headers() })).status).toBe(200);
    expect((await admin.client.tokens.list.query()).length).toBeGreaterThan(0);
    await runToCompletion();
    expect(server.output()).not.toContain(token);
  }, 90_000);
});
