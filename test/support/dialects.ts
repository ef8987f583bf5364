/**
 * The two databases a store suite runs on, for `describe.each`: SQLite in memory (the server's)
 * and a real PostgreSQL (test/support/postgres.ts: one throwaway cluster per test file, started
 * on first use, a database of its own per suite). PostgreSQL's half skips, saying so, where it is
 * not installed. Each harness can add organizations and read any table back through drizzle, so
 * a suite checks what was stored in either dialect with the same code (both describe the same
 * rows: test/schema-dialects.test.ts).
 */
import { asc } from "drizzle-orm";
import * as pgTables from "../../schema/pg-tables.ts";
import * as liteTables from "../../schema/tables.ts";
import { openPostgres, type PgDb } from "../../server/db-postgres.ts";
import { type Db, openDatabase } from "../../server/db.ts";
import { hasPostgres, startPostgres, type TestPostgres, warnIfNoPostgres } from "./postgres.ts";

type Tables = typeof liteTables;
export type TableName = {
  [K in keyof Tables]: Tables[K] extends { $inferSelect: object } ? K : never;
}[keyof Tables];
export type Row<K extends TableName> = Tables[K]["$inferSelect"];

interface Common {
  addOrg(org: { id: string; slug: string; name?: string }): Promise<void>;
  /** Every row of a table (the audit in id order). */
  rows<K extends TableName>(table: K): Promise<Array<Row<K>>>;
  close(): Promise<void>;
}

export type DialectHarness = Common & ({ dialect: "sqlite"; db: Db } | { dialect: "postgres"; db: PgDb });

export interface Dialect {
  name: "SQLite" | "PostgreSQL";
  skip: boolean;
  open(): Promise<DialectHarness>;
}

let cluster: TestPostgres | undefined;

/** Stops this file's PostgreSQL, if it started one: call it in the file's `afterAll`. */
export async function stopPostgres(): Promise<void> {
  await cluster?.[Symbol.asyncDispose]();
  cluster = undefined;
}

const CREATED = Date.UTC(2031, 0, 1);
// Tables by name; the row types agree between dialects (schema-dialects.test.ts), which `rows` relies on.
const liteByName: Readonly<Record<TableName, unknown>> = liteTables;
const pgByName: Readonly<Record<TableName, unknown>> = pgTables;

/** Both dialects; `what` names the suite in the line printed when PostgreSQL's half skips. */
export function dialects(what: string): Dialect[] {
  warnIfNoPostgres(`the PostgreSQL half of ${what}`);
  return [
    {
      name: "SQLite",
      skip: false,
      open: async () => sqliteHarness(openDatabase(":memory:")),
    },
    {
      name: "PostgreSQL",
      skip: !hasPostgres,
      async open() {
        cluster ??= await startPostgres();
        return postgresHarness(await openPostgres(await cluster.createDatabase()));
      },
    },
  ];
}

/** A harness over an SQLite database already open (the caller's; closed with the harness). */
export function sqliteHarness(db: Db): DialectHarness {
  return {
    dialect: "sqlite",
    db,
    async addOrg(org) {
      db.orm
        .insert(liteTables.organizations)
        .values({ name: org.slug, ...org, createdAt: CREATED })
        .run();
    },
    async rows(table) {
      const source = liteByName[table] as typeof liteTables.adminAudit;
      const query = db.orm.select().from(source);
      return (table === "adminAudit" ? query.orderBy(asc(liteTables.adminAudit.id)) : query).all() as never;
    },
    close: async () => db.close(),
  };
}

/** The same over a PostgreSQL database already open. */
export function postgresHarness(db: PgDb): DialectHarness {
  return {
    dialect: "postgres",
    db,
    async addOrg(org) {
      await db.orm.insert(pgTables.organizations).values({ name: org.slug, ...org, createdAt: CREATED });
    },
    async rows(table) {
      const source = pgByName[table] as typeof pgTables.adminAudit;
      const query = db.orm.select().from(source);
      return (await (table === "adminAudit" ? query.orderBy(asc(pgTables.adminAudit.id)) : query)) as never;
    },
    close: () => db.close(),
  };
}
