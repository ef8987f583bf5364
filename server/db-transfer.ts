/**
 * Moving a deployment's data from its SQLite file to PostgreSQL (`health db export|import`,
 * docs/deploy.md): an export is one NDJSON file, a header line, then one line per row, then a
 * trailer with every table's row count.
 *
 * - The export reads the SQLite file in one read transaction, so a server may keep running on it:
 *   the file is a consistent snapshot of one moment. Rows stream out (SQLite's `iterate`), so a
 *   large file never sits in memory.
 * - The import writes every row in ONE transaction into a database that has no data yet: a dump
 *   that is cut short (no trailer, or counts that disagree) or a row that does not fit rolls the
 *   whole import back, so a failed import can simply be run again. It refuses a database that
 *   already holds data (a server started on it made the default organization), since ids would
 *   clash and the copy would be a merge nobody asked for.
 * - Both sides open their database the way the server does, migrations included, so the export
 *   is always in the current schema and the import's tables are that same schema.
 * - Not carried over: `loop_engines` (which processes hold leases: the importing side's engines
 *   register themselves, and runs held by an engine of the old server are taken back once their
 *   lease has run out).
 *
 * A row is written and read as the columns' JavaScript values, which both dialects agree on
 * (test/schema-dialects.test.ts): text, numbers (epoch milliseconds included) and null.
 */
import { once } from "node:events";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { count, getTableColumns, getTableName, sql } from "drizzle-orm";
import * as v from "valibot";
import * as pgTables from "../schema/pg-tables.ts";
import * as liteTables from "../schema/tables.ts";
import { openPostgres } from "./db-postgres.ts";
import { databaseLocation, databasePath, isPostgresUrl, openDatabase } from "./db.ts";
import { SERVER_VERSION } from "./version.ts";

type TableKey = keyof typeof liteTables;
/** The tables by key, as plain objects: indexing a module namespace by a variable defeats bundlers. */
export const sqliteTables: { readonly [K in TableKey]: (typeof liteTables)[K] } = { ...liteTables };
const postgresTables: { readonly [K in TableKey]: (typeof pgTables)[K] } = { ...pgTables };

/**
 * Every table, parents before the rows that refer to them (foreign keys). A table added to
 * schema/tables.ts and not named here fails to compile (`Unlisted` below): it must be placed, or
 * said to be left out, on purpose.
 */
export const TRANSFER_ORDER = [
  "organizations",
  "settings",
  "users",
  "memberships",
  "sessions",
  "apiTokens",
  "deviceLogins",
  "adminAudit",
  "planAudit",
  "rateLimitDays",
  "idempotencyKeys",
  "runs",
  "runSteps",
  "runStepAttempts",
  "usageMinutes",
] as const satisfies readonly TableKey[];
const LEFT_OUT = ["loopEngines"] as const satisfies readonly TableKey[];
type Unlisted = Exclude<TableKey, (typeof TRANSFER_ORDER)[number] | (typeof LEFT_OUT)[number]>;
const everyTableListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyTableListed;

type TransferTable = (typeof TRANSFER_ORDER)[number];

export const DUMP_FORMAT = "health-db-export";

const headerSchema = v.object({
  format: v.literal(DUMP_FORMAT),
  version: v.literal(1),
  serverVersion: v.string(),
  exportedAt: v.string(),
  tables: v.array(v.picklist(TRANSFER_ORDER)),
});
const rowLineSchema = v.object({
  table: v.picklist(TRANSFER_ORDER),
  row: v.record(v.string(), v.union([v.string(), v.number(), v.null()])),
});
const trailerSchema = v.object({
  end: v.literal(true),
  counts: v.record(v.picklist(TRANSFER_ORDER), v.pipe(v.number(), v.integer(), v.minValue(0))),
});

export type TransferCounts = Partial<Record<TransferTable, number>>;

export interface TransferProgress {
  /** A table is about to be read or written. */
  table?(table: TransferTable): void;
  /** Every `every` rows of a table (for a progress line on large tables). */
  rows?(table: TransferTable, done: number): void;
}

const PROGRESS_EVERY = 10_000;

/** Writes the SQLite database at `from` to `out` as NDJSON; the row count of every table. */
export async function exportDatabase(
  from: string,
  out: Writable,
  progress: TransferProgress = {},
): Promise<TransferCounts> {
  if (isPostgresUrl(from)) {
    throw new TransferError(
      "the export reads an SQLite file (file:path); moving from PostgreSQL back to SQLite is not supported",
    );
  }
  const path = databasePath(from);
  if (path === ":memory:") throw new TransferError("the export needs an SQLite file, not :memory:");
  // Opening would create an empty database there, and export nothing.
  if (!existsSync(path)) throw new TransferError(`there is no SQLite database at ${path}`);
  const db = openDatabase(from);
  const counts: TransferCounts = {};
  const write = async (line: unknown) => {
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, "drain");
  };
  try {
    // One read transaction: every table as of the same moment, while a server may go on writing.
    db.sqlite.run("BEGIN");
    try {
      const header: v.InferOutput<typeof headerSchema> = {
        format: DUMP_FORMAT,
        version: 1,
        serverVersion: SERVER_VERSION,
        exportedAt: new Date().toISOString(),
        tables: [...TRANSFER_ORDER],
      };
      await write(header);
      for (const table of TRANSFER_ORDER) {
        progress.table?.(table);
        const name = getTableName(sqliteTables[table]);
        let done = 0;
        // Insertion order (rowid): queued runs keep their order of arrival on the other side.
        for (const row of db.sqlite
          .query<Record<string, unknown>, []>(`SELECT * FROM "${name}" ORDER BY rowid`)
          .iterate()) {
          await write({ table, row });
          done += 1;
          if (done % PROGRESS_EVERY === 0) progress.rows?.(table, done);
        }
        counts[table] = done;
      }
      await write({ end: true, counts });
    } finally {
      db.sqlite.run("COMMIT");
    }
  } finally {
    db.close();
  }
  return counts;
}

/** A dump or a target the import refuses: one line, for the operator. */
export class TransferError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TransferError";
  }
}

/** Rows of one table, batched for multi-row INSERTs (PostgreSQL allows 65,535 parameters). */
const BATCH_ROWS = 500;

interface Target {
  /** Tables that already hold rows, with how many. */
  nonEmpty(): Promise<Array<[TransferTable, number]>>;
  /** Runs `work` in one transaction; `insert` adds rows to a table inside it. */
  transaction(
    work: (insert: (table: TransferTable, rows: Array<Record<string, unknown>>) => Promise<void>) => Promise<void>,
  ): Promise<void>;
  close(): Promise<void>;
}

async function openTarget(to: string): Promise<Target> {
  if (isPostgresUrl(to)) {
    const db = await openPostgres(to, { max: 2 });
    return {
      async nonEmpty() {
        const found: Array<[TransferTable, number]> = [];
        for (const table of [...TRANSFER_ORDER, ...LEFT_OUT]) {
          const [row] = await db.orm.select({ n: count() }).from(postgresTables[table]);
          if ((row?.n ?? 0) > 0) found.push([table as TransferTable, row?.n ?? 0]);
        }
        return found;
      },
      async transaction(work) {
        await db.orm.transaction(async (tx) => {
          await work(async (table, rows) => {
            await tx.insert(postgresTables[table]).values(rows as never);
          });
          // Ids given explicitly do not move an identity's sequence: the next audit row must not
          // reuse one that came over.
          await tx.execute(
            sql`SELECT setval(pg_get_serial_sequence('admin_audit', 'id'), COALESCE((SELECT MAX(id) FROM admin_audit), 0) + 1, false)`,
          );
        });
      },
      close: () => db.close(),
    };
  }
  if (databasePath(to) === ":memory:")
    throw new TransferError("the import needs PostgreSQL or an SQLite file, not :memory:");
  const db = openDatabase(to);
  return {
    async nonEmpty() {
      const found: Array<[TransferTable, number]> = [];
      for (const table of [...TRANSFER_ORDER, ...LEFT_OUT]) {
        const n = db.orm.select({ n: count() }).from(sqliteTables[table]).get()?.n ?? 0;
        if (n > 0) found.push([table as TransferTable, n]);
      }
      return found;
    },
    async transaction(work) {
      db.sqlite.run("BEGIN IMMEDIATE");
      try {
        await work(async (table, rows) => {
          db.orm
            .insert(sqliteTables[table])
            .values(rows as never)
            .run();
        });
        db.sqlite.run("COMMIT");
      } catch (error) {
        db.sqlite.run("ROLLBACK");
        throw error;
      }
    },
    close: async () => db.close(),
  };
}

/**
 * Reads an export from `input` into the empty database at `to` (postgres://… or an SQLite file),
 * all or nothing; the row count of every table written.
 */
export async function importDatabase(
  input: Readable,
  to: string,
  progress: TransferProgress = {},
): Promise<TransferCounts> {
  const target = await openTarget(to);
  try {
    const existing = await target.nonEmpty();
    if (existing.length > 0) {
      const what = existing.map(([table, n]) => `${getTableName(sqliteTables[table])}: ${n}`).join(", ");
      throw new TransferError(
        `${databaseLocation(to)} already holds data (${what}); import into an empty database, before any server has started on it`,
      );
    }
    const counts: TransferCounts = {};
    await target.transaction(async (insert) => {
      const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
      let lineNo = 0;
      let header = false;
      let trailer: v.InferOutput<typeof trailerSchema> | undefined;
      let table: TransferTable | undefined;
      let batch: Array<Record<string, unknown>> = [];
      let columns = new Set<string>();
      const flush = async () => {
        if (table === undefined || batch.length === 0) return;
        await insert(table, batch);
        batch = [];
      };
      for await (const text of lines) {
        lineNo += 1;
        if (text.trim() === "") continue;
        if (trailer !== undefined) throw new TransferError(`line ${lineNo}: text after the end of the export`);
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new TransferError(`line ${lineNo} is not JSON: is this a file written by \`health db export\`?`);
        }
        if (!header) {
          if (!v.is(headerSchema, parsed)) {
            throw new TransferError(
              "the file does not start with the header of `health db export` (format health-db-export, version 1)",
            );
          }
          header = true;
          continue;
        }
        const end = v.safeParse(trailerSchema, parsed);
        if (end.success) {
          trailer = end.output;
          continue;
        }
        const line = v.safeParse(rowLineSchema, parsed);
        if (!line.success) throw new TransferError(`line ${lineNo} is not a row of a known table`);
        if (line.output.table !== table) {
          await flush();
          table = line.output.table;
          columns = new Set(Object.keys(getTableColumns(sqliteTables[table])));
          progress.table?.(table);
        }
        for (const column of Object.keys(line.output.row)) {
          if (!columns.has(column)) {
            throw new TransferError(`line ${lineNo}: ${table} has no column "${column}" in this version's schema`);
          }
        }
        batch.push(line.output.row);
        const done = (counts[table] ?? 0) + 1;
        counts[table] = done;
        if (done % PROGRESS_EVERY === 0) progress.rows?.(table, done);
        if (batch.length >= BATCH_ROWS) await flush();
      }
      await flush();
      if (!header) throw new TransferError("the file is empty");
      if (trailer === undefined) {
        throw new TransferError("the export ends before its last line: it was cut short; nothing was imported");
      }
      for (const name of TRANSFER_ORDER) {
        const expected = trailer.counts[name] ?? 0;
        if ((counts[name] ?? 0) !== expected) {
          throw new TransferError(
            `${getTableName(sqliteTables[name])}: the export says ${expected} rows, the file has ${counts[name] ?? 0}; nothing was imported`,
          );
        }
      }
    });
    return counts;
  } finally {
    await target.close();
  }
}

/** An export file, or standard output for `-`. */
export function openOutput(path: string): Writable {
  return path === "-" ? process.stdout : createWriteStream(path, { flags: "wx", mode: 0o600 });
}

/** An export file, or standard input for `-`. */
export function openInput(path: string): Readable {
  return path === "-" ? process.stdin : createReadStream(path);
}
