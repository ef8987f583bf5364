/**
 * Opening PostgreSQL (server/db-postgres.ts) against a real server: the migrations of drizzle-pg/
 * are applied once, also when several instances open a new database at the same moment; epoch
 * milliseconds come back as numbers; the URL's database is the one used; a failure to connect
 * says where, without the password. The server itself still refuses postgres:// (config.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core";
import { eq } from "drizzle-orm";
import * as pgTables from "../schema/pg-tables.ts";
import { isPostgresUrl, openPostgres } from "../server/db-postgres.ts";
import { openDatabase } from "../server/db.ts";
import { hasPostgres, startPostgres, type TestPostgres, warnIfNoPostgres } from "./support/postgres.ts";

/** The migrations drizzle-kit wrote for PostgreSQL: each applied once. */
const MIGRATIONS = (
  JSON.parse(readFileSync(join(import.meta.dir, "..", "drizzle-pg", "meta", "_journal.json"), "utf8")) as {
    entries: unknown[];
  }
).entries.length;

warnIfNoPostgres("the PostgreSQL opener tests");

const tableNames = Object.values(pgTables)
  .map((table) => getTableConfig(table as PgTable).name)
  .sort();

describe.skipIf(!hasPostgres)("openPostgres", () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await pg?.[Symbol.asyncDispose]();
  });

  async function tablesOf(url: string): Promise<{ tables: string[]; migrations: number }> {
    const sql = new SQL(url);
    try {
      const rows: Array<{ name: string }> =
        await sql`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`;
      const [{ n }] = await sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
      return { tables: rows.map((row) => row.name), migrations: n };
    } finally {
      await sql.close();
    }
  }

  test("creates every table of schema/pg-tables.ts, and opening again changes nothing", async () => {
    const url = await pg.createDatabase();
    const first = await openPostgres(url);
    await first.close();
    expect(await tablesOf(url)).toEqual({ tables: tableNames, migrations: MIGRATIONS });
    const again = await openPostgres(url);
    await again.close();
    expect(await tablesOf(url)).toEqual({ tables: tableNames, migrations: MIGRATIONS });
  });

  test("three instances opening a new database at once migrate it once, and all open", async () => {
    const url = await pg.createDatabase();
    const dbs = await Promise.all([openPostgres(url), openPostgres(url), openPostgres(url)]);
    await Promise.all(dbs.map((db) => db.close()));
    expect(await tablesOf(url)).toEqual({ tables: tableNames, migrations: MIGRATIONS });
  });

  test("epoch milliseconds round-trip as numbers through the bigint columns", async () => {
    const db = await openPostgres(await pg.createDatabase());
    try {
      const now = Date.now();
      const far = 8_640_000_000_000_000; // the last millisecond a JavaScript Date can hold
      await db.orm.insert(pgTables.organizations).values({ id: "org_a", slug: "a", name: "A", createdAt: now });
      await db.orm.insert(pgTables.settings).values({ key: "k", value: "v", updatedAt: far });
      const [org] = await db.orm.select().from(pgTables.organizations).where(eq(pgTables.organizations.id, "org_a"));
      const [setting] = await db.orm.select().from(pgTables.settings);
      expect(org?.createdAt).toBe(now);
      expect(setting?.updatedAt).toBe(far);
    } finally {
      await db.close();
    }
  });

  test("the URL's database wins over PGDATABASE (Bun lets the variable override the URL)", async () => {
    const url = await pg.createDatabase();
    const before = process.env.PGDATABASE;
    process.env.PGDATABASE = "postgres";
    try {
      const db = await openPostgres(url);
      const [{ name }] = await db.client`SELECT current_database() AS name`;
      await db.close();
      expect(url.endsWith(`/${name}`)).toBe(true);
    } finally {
      if (before === undefined) delete process.env.PGDATABASE;
      else process.env.PGDATABASE = before;
    }
  });

  test("a server that does not answer fails with where it is, never the password", async () => {
    const url = `postgres://health:s3cret-pw@127.0.0.1:${pg.port + 1}/health`;
    const error = await openPostgres(url, { connectionTimeout: 2 }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toStartWith(`cannot open PostgreSQL at 127.0.0.1:${pg.port + 1}/health: `);
    expect(error?.message).not.toContain("s3cret-pw");
  });
});

test("postgres:// and postgresql:// URLs are told apart from SQLite ones", () => {
  expect(["postgres://db/h", "postgresql://u@db:5432/h", "POSTGRES://db/h"].map(isPostgresUrl)).toEqual([
    true,
    true,
    true,
  ]);
  expect(["file:.health/health.db", ":memory:", "/tmp/postgres://x"].map(isPostgresUrl)).toEqual([false, false, false]);
});

test("the SQLite opener refuses a PostgreSQL URL instead of making a file of it", () => {
  expect(() => openDatabase("postgres://db/health")).toThrow("openDatabase opens SQLite files");
});
