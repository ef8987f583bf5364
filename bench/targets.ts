/**
 * The servers the benches measure, each started in its own process so the driver never
 * competes with them. `bare` is a plain Bun.serve that parses a JSON body (if any) and answers
 * a fixed JSON; `gateway` is the real server with every plugin; `elysia-floor` is Elysia with the
 * planning route's shape (the same hooks, body parser, schema and response) and no work in any
 * hook: what the framework alone costs. Each prints one line `READY <url> <json details>`.
 *
 * gateway knobs (environment): BENCH_TOKENS=N seeds N API tokens before start (the table-size
 * bench); BENCH_LOOPS_DIR points HEALTH_LOOPS_DIR at a folder of loops; BENCH_DB_DIR puts the
 * database in a given folder, so several gateways share it, or BENCH_DATABASE_URL on a PostgreSQL;
 * HEALTH_REDIS_URL passes through.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Elysia } from "elysia";
import { PLANNING_BODY_LIMIT } from "../server/app.ts";
import { jsonBody } from "../http/body.ts";
import { ensureDefaultOrganization } from "../server/bootstrap.ts";
import { loadConfig } from "../server/config.ts";
import { openDatabase } from "../server/db.ts";
import { SqliteTokenStore } from "../server/services/token-store-sqlite.ts";
import { PostgresTokenStore } from "../server/services/token-store-postgres.ts";
import { PostgresStartupStore } from "../server/bootstrap-postgres.ts";
import { openPostgres } from "../server/db-postgres.ts";
import { isPostgresUrl } from "../server/config.ts";
import { startServer } from "../server/start.ts";
import { planningRequestSchema } from "../schema/wire.ts";

function seedTokens(dbUrl: string, count: number) {
  const db = openDatabase(dbUrl);
  const org = ensureDefaultOrganization(db);
  const actor = { kind: "system" as const, id: "bench" };
  const tokens = new SqliteTokenStore(db);
  const mint = (name: string, scopes: string[]) => tokens.createSync({ orgId: org.id, name, scopes, actor });
  db.sqlite.transaction(() => {
    for (let i = 0; i < Math.max(0, count - 3); i++) mint(`filler-${i}`, ["loop:run"]);
  })();
  const valid = mint("bench-cli", ["cli:run"]);
  const loop = mint("bench-loop", ["loop:run"]);
  const revoked = mint("bench-revoked", ["cli:run"]);
  db.sqlite.run("UPDATE api_tokens SET revokedAt = ? WHERE id = ?", [Date.now(), revoked.id]);
  db.close();
  return { orgId: org.id, valid: valid.token, loop: loop.token, revoked: revoked.token };
}

/** The same tokens in a PostgreSQL database (BENCH_DATABASE_URL), through the server's own stores. */
async function seedTokensPostgres(url: string, count: number) {
  const db = await openPostgres(url);
  try {
    const org = await new PostgresStartupStore(db).ensureDefaultOrganization();
    const actor = { kind: "system" as const, id: "bench" };
    const tokens = new PostgresTokenStore(db);
    const mint = (name: string, scopes: string[]) => tokens.create({ orgId: org.id, name, scopes, actor });
    for (let i = 0; i < Math.max(0, count - 3); i++) await mint(`filler-${i}`, ["loop:run"]);
    const valid = await mint("bench-cli", ["cli:run"]);
    const loop = await mint("bench-loop", ["loop:run"]);
    const revoked = await mint("bench-revoked", ["cli:run"]);
    await tokens.revoke({ orgId: org.id, id: revoked.id, actor });
    return { orgId: org.id, valid: valid.token, loop: loop.token, revoked: revoked.token };
  } finally {
    await db.close();
  }
}

/**
 * The planning route's hook shape with every hook empty, answering the gateway's bytes and
 * headers: onRequest, three transforms (chain, auth, rate-limit), the body parser and schema,
 * three before-handles (the cache one async), two after-handles, three mapResponses, onError.
 */
function elysiaFloor(body: string, headers: Record<string, string>) {
  const noop = () => {};
  const app = new Elysia()
    .onError({ as: "global" }, () => new Response("error", { status: 500 }))
    .decorate("state", { chain: [] as string[] })
    .onRequest(({ set }) => {
      set.headers["x-request-id"] = crypto.randomUUID();
    })
    .mapResponse({ as: "global" }, ({ set }) => {
      set.headers["server-timing"] = headers["server-timing"] ?? "";
    })
    .onTransform(noop)
    .derive(() => ({}))
    .derive(({ set }) => {
      set.headers["ratelimit-policy"] = headers["ratelimit-policy"] ?? "";
      set.headers.ratelimit = headers.ratelimit ?? "";
      return {};
    })
    .onBeforeHandle(noop)
    .onBeforeHandle(noop)
    .onBeforeHandle(async () => body)
    .onAfterHandle(noop)
    .onAfterHandle(({ set }) => {
      set.headers["content-type"] = headers["content-type"] ?? "";
      set.headers["x-health-cache"] = "hit";
      return body;
    })
    .mapResponse(noop)
    .mapResponse(noop)
    .post("/cli/code/sessions", async () => body, {
      body: planningRequestSchema,
      parse: jsonBody(PLANNING_BODY_LIMIT),
    });
  app.listen({ port: 0, hostname: "127.0.0.1" });
  return app;
}

const kind = process.argv[2];
if (kind === "elysia-floor") {
  const { body, headers } = JSON.parse(await Bun.file(process.env.BENCH_RESPONSE ?? "").text());
  const app = elysiaFloor(body, headers);
  console.log(`READY http://127.0.0.1:${app.server?.port} {}`);
} else if (kind === "bare-same") {
  // Answers with the very bytes and headers the gateway sent (BENCH_RESPONSE, a JSON file of
  // { body, headers }): what is left between the two is framework and plugin work.
  const { body, headers } = JSON.parse(await Bun.file(process.env.BENCH_RESPONSE ?? "").text());
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      await request.json();
      return new Response(body, { headers: { ...headers, "x-request-id": crypto.randomUUID() } });
    },
  });
  console.log(`READY http://127.0.0.1:${server.port} {}`);
} else if (kind === "bare") {
  const answer = JSON.stringify({ model: "planner-v0", assistant_message: "ok", tool_plan: [] });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      if (request.method === "POST") await request.json();
      return new Response(answer, { headers: { "content-type": "application/json" } });
    },
  });
  console.log(`READY http://127.0.0.1:${server.port} {}`);
} else if (kind === "gateway") {
  // BENCH_DB_DIR: several gateways on one database file; BENCH_DATABASE_URL: on one PostgreSQL
  // (the instances bench).
  const dir = process.env.BENCH_DB_DIR ?? mkdtempSync(join(tmpdir(), "health-bench-"));
  const dbUrl = process.env.BENCH_DATABASE_URL ?? `file:${join(dir, "bench.db")}`;
  const tokenCount = Number(process.env.BENCH_TOKENS ?? "3");
  const tokens = isPostgresUrl(dbUrl) ? await seedTokensPostgres(dbUrl, tokenCount) : seedTokens(dbUrl, tokenCount);
  const loaded = loadConfig({
    ...process.env,
    PORT: "0",
    HEALTH_DATABASE_URL: dbUrl,
    HEALTH_LOOPS_DIR: process.env.BENCH_LOOPS_DIR ?? join(dir, "no-loops"),
    HEALTH_LOOP_CONCURRENCY: "1",
    HEALTH_RATE_LIMIT_PER_MINUTE: "1000000",
    HEALTH_RATE_LIMIT_PER_DAY: "100000000",
  });
  if (!loaded.ok) throw new Error(loaded.problems.join("; "));
  const running = await startServer(loaded.config, { log: () => {} });
  console.log(`READY ${running.url} ${JSON.stringify(tokens)}`);
} else {
  console.error("usage: bun bench/targets.ts bare|bare-same|elysia-floor|gateway");
  process.exit(2);
}

// Exit cleanly on SIGINT so `bun --cpu-prof` can write its profile.
process.on("SIGINT", () => process.exit(0));
