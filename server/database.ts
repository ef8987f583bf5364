/**
 * The server's database, chosen by HEALTH_DATABASE_URL: an SQLite file (the default: one host) or
 * PostgreSQL (`postgres://…`: instances on several hosts). Each opener returns every store the
 * server keeps in its database, in that dialect, behind the interfaces the app, the engine and the
 * stores take; server/start.ts builds the same server from either without knowing which it has.
 *
 * Over SQLite the stores answer at once where they can (the auth hooks stay synchronous, the
 * write-behind goes to a worker thread with its own connection); over PostgreSQL everything is a
 * promise, and the write-behind runs on the event loop (server/services/write-behind-postgres.ts).
 */
import type { AsyncClaims } from "../core/loop/claims.ts";
import { createAsyncClaims } from "../core/loop/claims.ts";
import { createPostgresClaims } from "../core/loop/claims-postgres.ts";
import { createRunStore, type RunStore } from "../core/loop/store.ts";
import { createPostgresRunStore } from "../core/loop/store-postgres.ts";
import { type IdempotencyStore, SqliteIdempotencyStore } from "../plugins/idempotency/store.ts";
import { PostgresIdempotencyStore } from "../plugins/idempotency/store-postgres.ts";
import { PostgresDayCounts } from "../plugins/rate-limit/day-counts-postgres.ts";
import { type DayCountStore, SqliteDayCounts } from "../plugins/rate-limit/store.ts";
import { PostgresStartupStore } from "./bootstrap-postgres.ts";
import { SqliteStartupStore, type StartupStore } from "./bootstrap.ts";
import { openPostgres } from "./db-postgres.ts";
import { databaseLocation, databasePath, isPostgresUrl, openDatabase } from "./db.ts";
import { type DatabaseProbe, postgresProbe, sqliteProbe } from "./routes/health.ts";
import { createPostgresTriggerStore, createSqliteTriggerStore, type TriggerStore } from "./routes/triggers.ts";
import { PostgresAccountStore } from "./services/account-store-postgres.ts";
import { SqliteAccountStore } from "./services/account-store-sqlite.ts";
import type { AccountStore } from "./services/accounts.ts";
import type { AdminAudit } from "./services/admin-audit.ts";
import { PostgresAdminAudit } from "./services/admin-audit-postgres.ts";
import { SqliteAdminAudit } from "./services/admin-audit-sqlite.ts";
import { PostgresDeviceLoginStore } from "./services/device-login-store-postgres.ts";
import { SqliteDeviceLoginStore } from "./services/device-login-store-sqlite.ts";
import type { DeviceLoginStore } from "./services/device-logins.ts";
import { type RetentionStore, SqliteRetentionStore } from "./services/retention.ts";
import { PostgresRetentionStore } from "./services/retention-store-postgres.ts";
import { PostgresTokenStore } from "./services/token-store-postgres.ts";
import { SqliteTokenStore } from "./services/token-store-sqlite.ts";
import type { TokenStore } from "./services/tokens.ts";
import { postgresUsageReader } from "./services/usage-reader-postgres.ts";
import { createUsageReader, type UsageReader } from "./services/usage.ts";
import { inlineWriteBehind, type WriteBehind, workerWriteBehind } from "./services/write-behind.ts";
import { postgresWriteBehind } from "./services/write-behind-postgres.ts";

export interface ServerDatabase {
  dialect: "sqlite" | "postgres";
  /** Where it is, for the start-up log: never a password. */
  location: string;
  startup: StartupStore;
  accounts: AccountStore;
  tokens: TokenStore;
  deviceLogins: DeviceLoginStore;
  adminAudit: AdminAudit;
  /** The rate limit's daily counts when there is no Redis. */
  dayCounts: DayCountStore;
  /** Idempotency-Keys: always the triggers' (in the run's transaction), planning's without Redis. */
  idempotency: IdempotencyStore;
  triggers: TriggerStore;
  runs: RunStore;
  claims: AsyncClaims;
  retention: RetentionStore;
  usageReader: UsageReader;
  probe: DatabaseProbe;
  /** Planning audit rows and usage rollups, written off the request path. */
  writeBehind(log: (message: string) => void): WriteBehind;
  close(): Promise<void>;
}

export function openServerDatabase(url: string): Promise<ServerDatabase> {
  return isPostgresUrl(url) ? openPostgresDatabase(url) : Promise.resolve(openSqliteDatabase(url));
}

function openSqliteDatabase(url: string): ServerDatabase {
  const db = openDatabase(url);
  const path = databasePath(url);
  const idempotency = new SqliteIdempotencyStore(db.sqlite);
  return {
    dialect: "sqlite",
    location: databaseLocation(url),
    startup: new SqliteStartupStore(db),
    accounts: new SqliteAccountStore(db),
    tokens: new SqliteTokenStore(db),
    deviceLogins: new SqliteDeviceLoginStore(db),
    adminAudit: new SqliteAdminAudit(db),
    dayCounts: new SqliteDayCounts(db.sqlite),
    idempotency,
    triggers: createSqliteTriggerStore(db.sqlite, idempotency),
    runs: createRunStore(db.sqlite),
    claims: createAsyncClaims(db.sqlite),
    retention: new SqliteRetentionStore(db.sqlite),
    usageReader: createUsageReader(db.sqlite),
    probe: sqliteProbe(db.sqlite),
    // A file: a worker thread with its own connection; in memory there is no other connection to open.
    writeBehind: () => (path === ":memory:" ? inlineWriteBehind(db.sqlite) : workerWriteBehind(path)),
    close: async () => db.close(),
  };
}

async function openPostgresDatabase(url: string): Promise<ServerDatabase> {
  const pg = await openPostgres(url);
  return {
    dialect: "postgres",
    location: databaseLocation(url),
    startup: new PostgresStartupStore(pg),
    accounts: new PostgresAccountStore(pg),
    tokens: new PostgresTokenStore(pg),
    deviceLogins: new PostgresDeviceLoginStore(pg),
    adminAudit: new PostgresAdminAudit(pg),
    dayCounts: new PostgresDayCounts(pg),
    idempotency: new PostgresIdempotencyStore(pg),
    triggers: createPostgresTriggerStore(pg.orm),
    runs: createPostgresRunStore(pg.orm),
    claims: createPostgresClaims(pg.orm),
    retention: new PostgresRetentionStore(pg),
    usageReader: postgresUsageReader(pg),
    probe: postgresProbe(pg),
    writeBehind: (log) => postgresWriteBehind(pg, log),
    close: () => pg.close(),
  };
}
