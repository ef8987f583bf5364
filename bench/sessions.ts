/**
 * What resolving an admin session costs, in process: every console and CLI admin request resolves
 * one before tRPC runs its procedure. 1,000 users with a session each; the median of several
 * rounds of `resolveSession` (secret → hash → the store's lookup) over SQLite and, when it is
 * installed, PostgreSQL (a round trip on loopback), and of a whole `auth.me` through the tRPC
 * handler over SQLite (no HTTP: the handler called directly).
 *
 *   bun bench/sessions.ts [--n 20000] [--rounds 5]
 */
import { parseArgs } from "node:util";
import { ensureDefaultOrganization } from "../server/bootstrap.ts";
import { openPostgres } from "../server/db-postgres.ts";
import { openDatabase } from "../server/db.ts";
import { PostgresAccountStore } from "../server/services/account-store-postgres.ts";
import { SqliteAccountStore } from "../server/services/account-store-sqlite.ts";
import { type AccountStore, LoginLimiter, resolveSession } from "../server/services/accounts.ts";
import { SqliteAdminAudit } from "../server/services/admin-audit-sqlite.ts";
import { SqliteDeviceLoginStore } from "../server/services/device-login-store-sqlite.ts";
import { DeviceStartLimiter } from "../server/services/device-logins.ts";
import { SqliteTokenStore } from "../server/services/token-store-sqlite.ts";
import { createUsageReader } from "../server/services/usage.ts";
import { trpcHandler } from "../server/trpc/handler.ts";
import { organizations } from "../schema/pg-tables.ts";
import { hasPostgres, startPostgres } from "../test/support/postgres.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "20000" }, rounds: { type: "string", default: "5" } },
});
const n = Number(values.n);
const rounds = Number(values.rounds);
const USERS = 1_000;
// Not a real password: the store is given a hash, and nothing here signs in with it.
const PASSWORD_HASH = "$argon2id$bench";

/** 1,000 users with one session each, and the session secret of the last. */
async function seed(store: AccountStore, orgId: string): Promise<string> {
  let token = "";
  for (let i = 0; i < USERS; i++) {
    const made = await store.createUser({
      email: `u${i}@example.com`,
      passwordHash: PASSWORD_HASH,
      orgId,
      role: "admin",
    });
    if (!made.ok) throw new Error(made.error);
    token = (await store.createSession(made.value.id)).token;
  }
  return token;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** µs per call of `f`, awaited one at a time. */
async function perCall(f: () => unknown, count: number): Promise<number> {
  for (let i = 0; i < Math.min(2_000, count); i++) await f();
  const started = performance.now();
  for (let i = 0; i < count; i++) await f();
  return ((performance.now() - started) / count) * 1000;
}

const db = openDatabase(":memory:");
const org = ensureDefaultOrganization(db);
const sqlite = new SqliteAccountStore(db);
const token = await seed(sqlite, org.id);
if ((await resolveSession(sqlite, token)) === null) throw new Error("the session does not resolve");
const handler = trpcHandler({
  usageReader: createUsageReader(db.sqlite),
  accounts: sqlite,
  tokens: new SqliteTokenStore(db),
  deviceLogins: new SqliteDeviceLoginStore(db),
  adminAudit: new SqliteAdminAudit(db),
  defaultOrg: org,
  loginLimiter: new LoginLimiter(),
  deviceStartLimiter: new DeviceStartLimiter(),
  // auth.me touches neither.
  engine: {} as never,
  catalog: {} as never,
});
const authMe = () =>
  handler(
    new Request("http://127.0.0.1/trpc/auth.me", { headers: { authorization: `Bearer ${token}` } }),
    "127.0.0.1",
  ).then((response) => response.text());

let postgres: { token: string; store: PostgresAccountStore; close(): Promise<void> } | undefined;
if (hasPostgres) {
  const cluster = await startPostgres();
  const pg = await openPostgres(await cluster.createDatabase());
  await pg.orm.insert(organizations).values({ id: org.id, slug: org.slug, name: "Default", createdAt: Date.now() });
  const store = new PostgresAccountStore(pg);
  postgres = {
    token: await seed(store, org.id),
    store,
    async close() {
      await pg.close();
      await cluster[Symbol.asyncDispose]();
    },
  };
} else {
  console.warn("PostgreSQL's initdb was not found: measuring SQLite only");
}

const samples: Record<string, number[]> = {
  "SQLite store": [],
  "PostgreSQL store": [],
  "auth.me through the tRPC handler, SQLite": [],
};
const [overSqlite, overPostgres, trpc] = Object.values(samples) as [number[], number[], number[]];
for (let round = 0; round < rounds; round++) {
  overSqlite.push(await perCall(() => resolveSession(sqlite, token), n));
  if (postgres !== undefined) {
    const { store, token: pgToken } = postgres;
    overPostgres.push(await perCall(() => resolveSession(store, pgToken), n / 10));
  }
  trpc.push(await perCall(authMe, n / 4));
}
await postgres?.close();
db.close();

console.log(`resolveSession, ${USERS} sessions, median of ${rounds} rounds (µs per call)`);
for (const [name, xs] of Object.entries(samples)) {
  if (xs.length > 0) console.log(`  ${name.padEnd(42)} ${median(xs).toFixed(2)}`);
}
