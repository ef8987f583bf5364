/**
 * What authenticating a request and answering /readyz cost over each dialect, in process (the
 * app's `handle`, no HTTP): a GET behind the auth plugin with an API token (SQLite: the
 * synchronous lookup and hooks; PostgreSQL: a round trip on loopback and async hooks), against
 * the same route with no auth, and the database probe of /readyz. Medians of several rounds.
 *
 *   bun bench/auth-dialects.ts [--n 20000] [--rounds 5]
 */
import { parseArgs } from "node:util";
import { Elysia } from "elysia";
import { hashToken } from "../core/tokens.ts";
import { context } from "../http/context.ts";
import { errorHandler } from "../http/errors.ts";
import { auth } from "../plugins/auth.ts";
import { organizations } from "../schema/pg-tables.ts";
import { ensureDefaultOrganization } from "../server/bootstrap.ts";
import { openPostgres } from "../server/db-postgres.ts";
import { openDatabase } from "../server/db.ts";
import { type DatabaseProbe, postgresProbe, sqliteProbe } from "../server/routes/health.ts";
import { Authenticator } from "../server/services/authenticator.ts";
import { PostgresTokenStore } from "../server/services/token-store-postgres.ts";
import { SqliteTokenStore } from "../server/services/token-store-sqlite.ts";
import type { TokenStore } from "../server/services/tokens.ts";
import { hasPostgres, startPostgres } from "../test/support/postgres.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "20000" }, rounds: { type: "string", default: "5" } },
});
const n = Number(values.n);
const rounds = Number(values.rounds);

async function perCall(f: () => Promise<unknown>, count: number): Promise<number> {
  for (let i = 0; i < Math.min(200, count); i++) await f();
  const started = performance.now();
  for (let i = 0; i < count; i++) await f();
  return ((performance.now() - started) / count) * 1000;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** An app with one route behind the auth plugin and one without, and a request for each. */
async function target(tokens: TokenStore, org: { id: string; slug: string }) {
  const created = await tokens.create({
    orgId: org.id,
    name: "bench",
    scopes: ["cli:run"],
    actor: { kind: "system", id: "system" },
  });
  const authenticator = new Authenticator({
    tokens,
    systemKeyHash: hashToken("bench-system-key-0123456789"),
    defaultOrg: org,
  });
  const app = new Elysia()
    .use(errorHandler)
    .use(context)
    .get("/open", () => "ok")
    .use(
      new Elysia()
        .use(auth({ ...authenticator.bearer, action: () => ({ kind: "cli:run" }) }))
        .get("/authed", () => "ok"),
    );
  const headers = { authorization: `Bearer ${created.token}` };
  return {
    authed: () => app.handle(new Request("http://127.0.0.1/authed", { headers })).then((r) => r.text()),
    open: () => app.handle(new Request("http://127.0.0.1/open", { headers })).then((r) => r.text()),
  };
}

const db = openDatabase(":memory:");
const org = ensureDefaultOrganization(db);
const lite = await target(new SqliteTokenStore(db), org);
const liteProbe = sqliteProbe(db.sqlite);

let pg:
  | { authed(): Promise<string>; open(): Promise<string>; probe: DatabaseProbe; close(): Promise<void> }
  | undefined;
if (hasPostgres) {
  const cluster = await startPostgres();
  const pgDb = await openPostgres(await cluster.createDatabase());
  await pgDb.orm.insert(organizations).values({ id: org.id, slug: org.slug, name: "Default", createdAt: Date.now() });
  pg = {
    ...(await target(new PostgresTokenStore(pgDb), org)),
    probe: postgresProbe(pgDb),
    async close() {
      await pgDb.close();
      await cluster[Symbol.asyncDispose]();
    },
  };
} else {
  console.warn("PostgreSQL's initdb was not found: measuring SQLite only");
}

const samples: Record<string, number[]> = {};
const add = (name: string, value: number) => {
  samples[name] ??= [];
  samples[name].push(value);
};
for (let round = 0; round < rounds; round++) {
  add("SQLite: request, no auth", await perCall(lite.open, n));
  add("SQLite: request behind auth", await perCall(lite.authed, n));
  add("SQLite: readyz probe", await perCall(liteProbe, n));
  if (pg !== undefined) {
    add("PostgreSQL: request, no auth", await perCall(pg.open, n / 10));
    add("PostgreSQL: request behind auth", await perCall(pg.authed, n / 10));
    add("PostgreSQL: readyz probe", await perCall(pg.probe, n / 10));
  }
}
await pg?.close();
db.close();

console.log(`median of ${rounds} rounds (µs per request, in process)`);
for (const [name, xs] of Object.entries(samples)) console.log(`  ${name.padEnd(36)} ${median(xs).toFixed(2)}`);
