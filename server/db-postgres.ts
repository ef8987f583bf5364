/**
 * Opens a PostgreSQL database (`postgres://…`) through drizzle over Bun's built-in client
 * (`drizzle-orm/bun-sql`: no driver to install) and applies the migrations of drizzle-pg/, which
 * drizzle-kit generates from schema/pg-tables.ts.

 */
import { join } from "node:path";
import { SQL } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import { migrate } from "drizzle-orm/bun-sql/migrator";
import * as tables from "../schema/pg-tables.ts";

import { postgresLocation } from "./db.ts";

export { isPostgresUrl } from "./db.ts";

export type PgDb = Awaited<ReturnType<typeof openPostgres>>;
export type PgOrm = PgDb["orm"];
/** A transaction of `PgOrm`; the stores write several rows in one. */
export type PgTx = Parameters<Parameters<PgOrm["transaction"]>[0]>[0];
/** Either: a statement that may run alone or inside a caller's transaction. */
export type PgExecutor = PgOrm | PgTx;

const migrationsFolder = join(import.meta.dir, "..", "drizzle-pg");

/**
 * The advisory lock instances take to migrate, one at a time: drizzle's migrator reads the last
 * applied migration before its transaction, so two instances starting together would both apply
 * the same one and the second would fail on "already exists". ASCII "health", as a bigint key.
 */
export const MIGRATION_LOCK = 0x6865616c7468;

export interface PostgresOptions {
  /** Connections in the pool (Bun's default is 10). */
  max?: number;
  /** Seconds to wait for a connection to open (Bun's default is 30). */
  connectionTimeout?: number;
}

export async function openPostgres(url: string, options: PostgresOptions = {}) {
  const database = decodeURIComponent(new URL(url).pathname.slice(1));
  const client = new SQL({
    url,
    // Bun lets PGDATABASE override the database a URL names (docs/stack.md): the URL wins here.
    ...(database === "" ? {} : { database }),
    max: options.max ?? 10,
    connectionTimeout: options.connectionTimeout ?? 30,
  });
  try {
    await migrateOnce(client);
  } catch (error) {
    await client.close();
    throw new Error(`cannot open PostgreSQL at ${postgresLocation(url)}: ${rootCause(error)}`, { cause: error });
  }
  const orm = drizzle({ client, schema: tables });
  return { dialect: "postgres" as const, client, orm, close: () => client.close() };
}

/** The server's own words: drizzle wraps them in "Failed query: <the whole migration text>". */
function rootCause(error: unknown): string {
  let current = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

/** Applies drizzle-pg/ under the migration lock, on one connection held for the lock's session. */
async function migrateOnce(client: SQL): Promise<void> {
  const connection = await client.reserve();
  try {
    await connection`SELECT pg_advisory_lock(${MIGRATION_LOCK}::bigint)`;
    try {
      await migrate(drizzle({ client: connection }), { migrationsFolder });
    } finally {
      await connection`SELECT pg_advisory_unlock(${MIGRATION_LOCK}::bigint)`;
    }
  } finally {
    connection.release();
  }
}
