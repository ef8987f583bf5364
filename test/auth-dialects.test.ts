/**
 * Authentication, /readyz and the runs gauge of /metrics over either database, one suite for both.
 * An app over the token store of the dialect: a bearer is looked up at once over SQLite (the
 * auth hooks stay synchronous for Elysia) and with a promise over PostgreSQL (the hooks are
 * async, and awaited); either way a revoked token is refused on the next request, another
 * organization's token is 403, and a token without the scope is 403. The database probe and the
 * runs by status are asked of the same database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { isAsync } from "elysia/compose";
import { hashToken } from "../core/tokens.ts";
import { context } from "../http/context.ts";
import { errorHandler } from "../http/errors.ts";
import { createHttpMetrics } from "../http/metrics.ts";
import { auth } from "../plugins/auth.ts";
import * as pgTables from "../schema/pg-tables.ts";
import * as liteTables from "../schema/tables.ts";
import { type DatabaseProbe, healthRoutes, postgresProbe, sqliteProbe } from "../server/routes/health.ts";
import { metricsRoute } from "../server/routes/metrics.ts";
import { Authenticator } from "../server/services/authenticator.ts";
import { createRunStore, type RunStore } from "../core/loop/store.ts";
import { createPostgresRunStore } from "../core/loop/store-postgres.ts";
import { PostgresTokenStore } from "../server/services/token-store-postgres.ts";
import { SqliteTokenStore } from "../server/services/token-store-sqlite.ts";
import type { Actor, TokenStore } from "../server/services/tokens.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";

const SYSTEM_KEY = "test-system-key-0123456789abcdef";
const ORG_A = { id: "org_a", slug: "clinic-a" };
const ORG_B = { id: "org_b", slug: "clinic-b" };
const admin: Actor = { kind: "user", id: "usr_admin" };
const T0 = Date.UTC(2031, 4, 6, 12);

afterAll(stopPostgres);

interface Served {
  tokens: TokenStore;
  probe: DatabaseProbe;
  runs: RunStore;
  addRun(id: string, status: "queued" | "running" | "sleeping" | "complete"): Promise<void>;
}

function serve(h: DialectHarness): Served {
  const run = (id: string, status: "queued" | "running" | "sleeping" | "complete") => ({
    id,
    workflowInstanceId: `wf_${id}`,
    orgId: ORG_A.id,
    loopId: "intake",
    triggerKind: "token" as const,
    triggerId: "tok",
    triggerName: "ci",
    status,
    createdAt: T0,
    updatedAt: T0,
  });
  if (h.dialect === "sqlite") {
    const db = h.db;
    return {
      tokens: new SqliteTokenStore(db),
      probe: sqliteProbe(db.sqlite),
      runs: createRunStore(db.sqlite),
      addRun: async (id, status) => {
        db.orm.insert(liteTables.runs).values(run(id, status)).run();
      },
    };
  }
  const db = h.db;
  return {
    tokens: new PostgresTokenStore(db),
    probe: postgresProbe(db),
    runs: createPostgresRunStore(db.orm),
    addRun: async (id, status) => {
      await db.orm.insert(pgTables.runs).values(run(id, status));
    },
  };
}

/** What /metrics reads of the engine: its own figures, and the database's runs through its store. */
const engineOver = (runs: RunStore) =>
  ({
    activeCount: 0,
    threadCount: 1,
    stats: () => ({ stepsRetried: 0, runsEnded: {}, threadFailures: {} }),
    unfinishedRuns: () => runs.unfinishedCounts(),
  }) as unknown as Parameters<typeof metricsRoute>[0]["engine"];

describe.each(dialects("the authentication, readiness and metrics tests"))("gateway over $name", (dialect) => {
  let h: DialectHarness;
  let served: Served;
  let authenticator: Authenticator<TokenStore>;
  let app: { handle(request: Request): Promise<Response> };

  beforeAll(async () => {
    if (dialect.skip) return;
    h = await dialect.open();
    await h.addOrg(ORG_A);
    await h.addOrg(ORG_B);
    served = serve(h);
    authenticator = new Authenticator({
      tokens: served.tokens,
      systemKeyHash: hashToken(SYSTEM_KEY),
      defaultOrg: ORG_A,
    });
    app = new Elysia()
      .use(errorHandler)
      .use(context)
      .use(healthRoutes({ database: served.probe, redis: undefined }))
      .use(
        new Elysia({ prefix: "/cli" })
          .use(auth({ ...authenticator.bearer, action: () => ({ kind: "cli:run" }) }))
          .get("/whoami", ({ state }) => ({ id: state.principal?.id, company: state.company }))
          .post("/echo", ({ body, state }) => ({ body, id: state.principal?.id })),
      )
      .use(
        new Elysia()
          .use(
            auth({
              ...authenticator.bearer,
              action: (params) => ({ kind: "loop:run", orgId: params.orgId ?? "", loopId: params.loopId ?? "" }),
            }),
          )
          .get("/loop/:orgId/:loopId", ({ state }) => ({ id: state.principal?.id })),
      )
      .use(
        metricsRoute({
          metrics: createHttpMetrics(),
          engine: engineOver(served.runs),
          bearer: authenticator.bearer,
        }),
      );
  });
  afterAll(async () => {
    await h?.close();
  });

  const call = (path: string, bearer?: string, init: RequestInit = {}) =>
    app.handle(
      new Request(`http://gateway${path}`, {
        ...init,
        headers: { ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }), ...init.headers },
      }),
    );

  test.skipIf(dialect.skip)("the hooks are synchronous over SQLite and async over PostgreSQL", () => {
    const plugin = auth({ ...authenticator.bearer, action: () => ({ kind: "cli:run" }) });
    const events = (plugin as unknown as { event: Record<string, Array<{ fn: () => unknown }> | undefined> }).event;
    const kinds = [...(events.parse ?? []), ...(events.transform ?? [])].map((hook) => ({
      name: hook.fn.name,
      async: isAsync(hook.fn),
    }));
    const async = h.dialect === "postgres";
    expect(kinds).toEqual(
      async
        ? [
            { name: "identifyBeforeParsingAsync", async: true },
            { name: "authorizeCallerAsync", async: true },
          ]
        : [
            { name: "identifyBeforeParsing", async: false },
            { name: "authorizeCaller", async: false },
          ],
    );
  });

  test.skipIf(dialect.skip)("a token authenticates; once revoked it is refused on the next request", async () => {
    const created = await served.tokens.create({ orgId: ORG_A.id, name: "ci", scopes: ["cli:run"], actor: admin });
    const ok = await call("/cli/whoami", created.token);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ id: created.id, company: ORG_A.slug });
    // A body is read only after the bearer was admitted in the parse phase.
    const echoed = await call("/cli/echo", created.token, {
      method: "POST",
      body: JSON.stringify({ a: 1 }),
      headers: { "content-type": "application/json" },
    });
    expect(await echoed.json()).toEqual({ body: { a: 1 }, id: created.id });

    await served.tokens.revoke({ orgId: ORG_A.id, id: created.id, actor: admin });
    expect((await call("/cli/whoami", created.token)).status).toBe(401);
    const anonymousPost = await call("/cli/echo", undefined, { method: "POST", body: "{not json" });
    expect(anonymousPost.status).toBe(401);
    expect((await call("/cli/whoami", "hst_not-a-real-token")).status).toBe(401);
  });

  test.skipIf(dialect.skip)("organization and scope checks hold: 403 for another organization or scope", async () => {
    const runner = await served.tokens.create({
      orgId: ORG_A.id,
      name: "runner",
      scopes: ["loop:run:intake"],
      actor: admin,
    });
    expect((await call(`/loop/${ORG_A.id}/intake`, runner.token)).status).toBe(200);
    expect((await call(`/loop/${ORG_A.id}/other`, runner.token)).status).toBe(403);
    expect((await call(`/loop/${ORG_B.id}/intake`, runner.token)).status).toBe(403);
    // No cli:run scope.
    expect((await call("/cli/whoami", runner.token)).status).toBe(403);
    // The system key: any company it names, and the metrics nobody else reads.
    const system = await call("/cli/whoami", SYSTEM_KEY, { headers: { "x-service-company": "Clinic-C" } });
    expect(await system.json()).toEqual({ id: "system", company: "clinic-c" });
    expect((await call("/metrics", runner.token)).status).toBe(403);
    expect((await call("/metrics")).status).toBe(401);
  });

  test.skipIf(dialect.skip)("/metrics counts runs by status from the database", async () => {
    await served.addRun("run_1", "queued");
    await served.addRun("run_2", "queued");
    await served.addRun("run_3", "running");
    await served.addRun("run_4", "complete");
    expect(await served.runs.unfinishedCounts()).toEqual({ queued: 2, running: 1, sleeping: 0 });
    const response = await call("/metrics", SYSTEM_KEY);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('health_runs{status="queued"} 2');
    expect(text).toContain('health_runs{status="running"} 1');
    expect(text).toContain('health_runs{status="sleeping"} 0');
  });

  test.skipIf(dialect.skip)("/readyz and /healthz ask the database", async () => {
    for (const path of ["/readyz", "/healthz"]) {
      const response = await call(path);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: "ok", database: "ok", redis: "off" });
    }
  });

  test.skipIf(dialect.skip || dialect.name === "SQLite")(
    "a pool with no free connection is not ready within the probe's timeout, and ready again once one is free",
    async () => {
      if (h.dialect !== "postgres") return;
      const client = h.db.client;
      // Every connection of the pool (10) taken, as by long queries.
      const held = await Promise.all(Array.from({ length: 10 }, () => client.reserve()));
      const probe = postgresProbe(h.db, 200);
      const started = performance.now();
      expect(await probe()).toBe(false);
      // Without its timeout the probe would wait for a connection until the test's own limit.
      expect(performance.now() - started).toBeLessThan(5_000);
      for (const connection of held) connection.release();
      expect(await probe()).toBe(true);
    },
  );
});

describe("the PostgreSQL probe", () => {
  test("a database that does not answer is not ready within the timeout, and checks share one query", async () => {
    let cancelled = 0;
    let asked = 0;
    // A query that never settles until cancelled, as Bun's client does when the server hangs.
    const client = () => {
      asked += 1;
      let reject: (error: Error) => void = () => {};
      const query = new Promise((_, no) => {
        reject = no;
      }) as Promise<unknown> & { cancel(): void };
      query.cancel = () => {
        cancelled += 1;
        reject(new Error("cancelled"));
      };
      return query;
    };
    const probe = postgresProbe({ client } as never, 50);
    const started = performance.now();
    const answers = await Promise.all([probe(), probe(), probe()]);
    expect(answers).toEqual([false, false, false]);
    // Without its timeout the probe would never answer: any bound far above 50 ms shows it.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect({ asked, cancelled }).toEqual({ asked: 1, cancelled: 1 });
    const app = new Elysia().use(healthRoutes({ database: probe, redis: undefined }));
    const response = await app.handle(new Request("http://gateway/readyz"));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ status: "degraded", database: "unavailable" });
  });
});
