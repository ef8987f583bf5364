/**
 * The server-side audit of planning calls: one row per answered call, never the prompt or
 * patient context. Rows leave the hot path at once: they are queued and handed over in small
 * batches (one JSON text each) to a sink. The server's sink is its write-behind writer
 * (server/services/write-behind.ts): a worker thread with its own connection, so the inserts, their
 * commits and SQLite's checkpoints (which fsync) never hold the event loop. A hard crash can lose
 * the rows of at most one flush interval.
 */
import type { Database } from "bun:sqlite";
import type { planAudit } from "../../schema/tables.ts";

export type PlanAuditRow = typeof planAudit.$inferInsert;

/** The columns of a queued row, in the order a batch carries them. */
export const AUDIT_COLUMNS = [
  "auditId",
  "requestId",
  "company",
  "principalKind",
  "principalId",
  "intent",
  "cache",
  "upstreamLatencyMs",
  "blockedSteps",
  "status",
  "createdAt",
] as const satisfies ReadonlyArray<keyof PlanAuditRow>;
const COLUMNS = AUDIT_COLUMNS;

/**
 * A batch travels as one JSON text (an array of row arrays in COLUMNS order): handing a worker
 * one string costs the event loop a third of what cloning the row objects does.
 */
const INSERT_AUDIT_ROW = insertAuditRows(1);

/** One statement inserting `rows` rows. */
function insertAuditRows(rows: number): string {
  const values = `(${COLUMNS.map(() => "?").join(", ")})`;
  return `INSERT OR IGNORE INTO plan_audit (${COLUMNS.join(", ")}) VALUES ${Array(rows).fill(values).join(", ")}`;
}

/** Rows per multi-row insert: 176 parameters, and ~25% less of the writer's CPU per row than one row per statement. */
const ROWS_PER_INSERT = 16;

const BATCH_ROWS = 256;

/**
 * Writes one batch in one transaction, sixteen rows a statement and the rest one by one.
 * Prepared positional inserts measured ~35% less CPU per row than unpacking the batch in SQL
 * with json_each, and sixteen rows a statement ~25% less again (bench/audit-writer.ts).
 */
export function auditWriter(sqlite: Database): (batch: string) => void {
  const insert = sqlite.query<unknown, Array<string | number | null>>(INSERT_AUDIT_ROW);
  const insertMany = sqlite.query<unknown, Array<string | number | null>>(insertAuditRows(ROWS_PER_INSERT));
  const writeAll = sqlite.transaction((rows: Array<Array<string | number | null>>) => {
    let at = 0;
    for (; at + ROWS_PER_INSERT <= rows.length; at += ROWS_PER_INSERT) {
      insertMany.run(...rows.slice(at, at + ROWS_PER_INSERT).flat());
    }
    for (; at < rows.length; at++) insert.run(...(rows[at] as Array<string | number | null>));
  });
  return (batch) => writeAll.immediate(JSON.parse(batch));
}

export interface AuditSink {
  /** A batch: JSON text of row arrays in COLUMNS order. */
  write(batch: string): void;
  /** Resolves when every row handed over is committed. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export class AuditLog {
  private queue: Array<Array<PlanAuditRow[keyof PlanAuditRow]>> = [];

  constructor(private readonly sink: AuditSink) {}

  record(row: PlanAuditRow): void {
    // In COLUMNS order (the audit test fails if two are swapped).
    this.queue.push([
      row.auditId,
      row.requestId,
      row.company,
      row.principalKind,
      row.principalId,
      row.intent,
      row.cache,
      row.upstreamLatencyMs ?? null,
      row.blockedSteps,
      row.status,
      row.createdAt,
    ]);
    if (this.queue.length === BATCH_ROWS) setImmediate(() => this.flush());
  }

  /** Hands the queued rows to the writer. */
  flush(): void {
    if (this.queue.length === 0) return;
    const batch = JSON.stringify(this.queue);
    this.queue = [];
    this.sink.write(batch);
  }

  /** Flushes and waits until the writer has committed everything. */
  async drain(): Promise<void> {
    this.flush();
    await this.sink.drain();
  }

  async close(): Promise<void> {
    this.flush();
    await this.sink.close();
  }
}
