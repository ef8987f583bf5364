/**
 * Opens the SQLite database, tunes it for a server (WAL, busy timeout) and applies the
 * drizzle-kit migrations checked in under drizzle/. PostgreSQL has its own opener
 * (db-postgres.ts); server/database.ts picks one by the URL.
 */
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import * as tables from "../schema/tables.ts";
import { isPostgresUrl } from "./config.ts";

export type Db = ReturnType<typeof openDatabase>;

const migrationsFolder = join(import.meta.dir, "..", "drizzle");

export { isPostgresUrl };

/** Where a PostgreSQL database is, for messages: host, port and database, never the password. */
export function postgresLocation(url: string): string {
  const parsed = new URL(url);
  return `${parsed.host}${parsed.pathname}`;
}

/** Where a database of either dialect is, for messages (start-up, health db): never a password. */
export function databaseLocation(url: string): string {
  if (isPostgresUrl(url)) return `PostgreSQL at ${postgresLocation(url)}`;
  const path = databasePath(url);
  return path === ":memory:" ? "SQLite in memory (nothing is kept)" : `the SQLite file ${path}`;
}

/** `file:path`, a bare path, or `:memory:`. */
export function databasePath(url: string): string {
  const path = url.startsWith("file:") ? url.slice("file:".length) : url;
  return path === "" ? ":memory:" : path;
}

export function openDatabase(url: string) {
  // Taken for a path, it would quietly create an SQLite file under ./postgres:/ (config.ts refuses it too).
  if (isPostgresUrl(url)) throw new Error("openDatabase opens SQLite files; PostgreSQL is opened with openPostgres");
  const path = databasePath(url);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.run("PRAGMA journal_mode = WAL");
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA synchronous = NORMAL");
  sqlite.run("PRAGMA foreign_keys = ON");
  const orm = drizzle(sqlite, { schema: tables });
  migrate(orm, { migrationsFolder });
  return { sqlite, orm, close: () => sqlite.close() };
}
