/**
 * schema/tables.ts (SQLite) and schema/pg-tables.ts (PostgreSQL) describe the same database twice,
 * so this test is what keeps them one description: the same tables, columns (names, JavaScript
 * types, nullability, defaults, keys, enums), primary and foreign keys, unique constraints and
 * indexes, read back with drizzle's `getTableConfig`; and the rule of the mapping, every epoch
 * millisecond (`…At`) column a PostgreSQL bigint. The row types both infer are compared at compile
 * time below. Any difference fails: change both files, then `npm run db:generate`.
 */
import { describe, expect, test } from "bun:test";
import { Column, getTableName, is, SQL, StringChunk } from "drizzle-orm";
import { getTableConfig as pgConfig, type PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import * as lite from "../schema/tables.ts";
import * as pg from "../schema/pg-tables.ts";

// Compile-time: the same table names, and each table's select and insert rows the same type.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Tables = keyof typeof lite;
type RowsAgree = {
  [K in Tables]: K extends keyof typeof pg
    ? Same<(typeof lite)[K]["$inferSelect"], (typeof pg)[K]["$inferSelect"]> extends true
      ? Same<(typeof lite)[K]["$inferInsert"], (typeof pg)[K]["$inferInsert"]>
      : false
    : false;
}[Tables];
const sameNames: Same<Tables, keyof typeof pg> = true;
const sameRows: Same<RowsAgree, true> = true;

/** Column references by name, text as written: the same for both dialects' `sql` fragments. */
function sqlText(fragment: SQL | undefined): string | null {
  if (fragment === undefined) return null;
  return fragment.queryChunks
    .map((chunk) => {
      if (is(chunk, Column)) return `"${chunk.name}"`;
      if (is(chunk, StringChunk)) return chunk.value.join("");
      if (is(chunk, SQL)) return sqlText(chunk);
      return String(chunk);
    })
    .join("");
}

const names = (columns: Array<{ name: string } | SQL>) =>
  columns.map((column) => (is(column, SQL) ? sqlText(column) : column.name));

type AnyColumn = ReturnType<typeof sqliteConfig>["columns"][number] | ReturnType<typeof pgConfig>["columns"][number];

/** What must agree about a column, dialect-neutral; its SQL type is compared separately. */
function columnShape(column: AnyColumn) {
  const identity =
    (column as { autoIncrement?: boolean }).autoIncrement === true ||
    (column as { generatedIdentity?: unknown }).generatedIdentity !== undefined;
  return {
    name: column.name,
    dataType: column.dataType,
    notNull: column.notNull,
    primary: column.primary,
    unique: column.isUnique ? (column.uniqueName ?? true) : false,
    default: column.hasDefault ? (column.default ?? "(identity)") : null,
    enumValues: column.enumValues ?? null,
    identity,
  };
}

function shape(config: ReturnType<typeof sqliteConfig> | ReturnType<typeof pgConfig>) {
  const byName = <T extends { name: string }>(items: T[]) => items.sort((a, b) => a.name.localeCompare(b.name));
  return {
    name: config.name,
    columns: byName(config.columns.map(columnShape)),
    primaryKeys: config.primaryKeys.map((key) => ({ name: key.getName(), columns: names(key.columns) })),
    foreignKeys: config.foreignKeys
      .map((key) => {
        const reference = key.reference();
        return {
          name: key.getName(),
          columns: names(reference.columns),
          table: getTableName(reference.foreignTable),
          foreignColumns: names(reference.foreignColumns),
          // SQLite spells out the default action; PostgreSQL leaves it unset.
          onDelete: key.onDelete ?? "no action",
          onUpdate: key.onUpdate ?? "no action",
        };
      })
      .sort((a, b) => a.name.localeCompare(b.name)),
    uniqueConstraints: config.uniqueConstraints.map((u) => ({ name: u.name ?? null, columns: names(u.columns) })),
    checks: config.checks.map((check) => check.name),
    indexes: byName(
      config.indexes.map((index) => ({
        name: index.config.name ?? "",
        columns: names(index.config.columns as Array<{ name: string } | SQL>),
        unique: index.config.unique ?? false,
        where: sqlText(index.config.where),
      })),
    ),
  };
}

// Plain maps of the two modules' tables, by export name.
const liteTables = new Map(Object.entries(lite) as Array<[string, SQLiteTable]>);
const pgTables = new Map(Object.entries(pg) as Array<[string, PgTable]>);
const tableNames = [...liteTables.keys()].sort();
const liteTable = (name: string) => liteTables.get(name) as SQLiteTable;
const pgTable = (name: string) => pgTables.get(name) as PgTable;

describe("one description of the tables for SQLite and PostgreSQL", () => {
  test("the row types agree (checked at compile time)", () => {
    expect([sameNames, sameRows]).toEqual([true, true]);
  });

  test("both files export the same tables", () => {
    expect([...pgTables.keys()].sort()).toEqual(tableNames);
  });

  test.each(tableNames)("%s: the same columns, keys and indexes", (name) => {
    expect(shape(pgConfig(pgTable(name)))).toEqual(shape(sqliteConfig(liteTable(name))));
  });

  test.each(tableNames)("%s: SQL types follow the mapping (text → text, epoch ms → bigint)", (name) => {
    const sqlite = new Map(sqliteConfig(liteTable(name)).columns.map((c) => [c.name, c]));
    for (const column of pgConfig(pgTable(name)).columns) {
      const type = column.getSQLType();
      const from = sqlite.get(column.name)?.getSQLType();
      const expected =
        from === "text"
          ? ["text"]
          : /At$/.test(column.name) || columnShape(column).identity
            ? ["bigint"]
            : ["integer", "bigint"];
      expect({ column: column.name, from, type: expected.includes(type) ? "as mapped" : type }).toEqual({
        column: column.name,
        from,
        type: "as mapped",
      });
    }
  });
});
