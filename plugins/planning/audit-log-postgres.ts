/**
 * The planning audit's writer over PostgreSQL (the queue and the SQLite writer: audit-log.ts). A
 * batch, JSON text of row arrays in AUDIT_COLUMNS order, is one multi-row INSERT, committed as one
 * statement; a row already stored (the same auditId) is skipped, as SQLite's INSERT OR IGNORE does.
 * Asynchronous: it runs on the event loop (the write-behind thread stays SQLite-only).
 */
import { planAudit } from "../../schema/pg-tables.ts";
import type { PgDb } from "../../server/db-postgres.ts";
import { AUDIT_COLUMNS, type PlanAuditRow } from "./audit-log.ts";

export function postgresAuditWriter(db: PgDb): (batch: string) => Promise<void> {
  return async (batch) => {
    const rows = (JSON.parse(batch) as Array<Array<string | number | null>>).map(
      (values) => Object.fromEntries(AUDIT_COLUMNS.map((column, i) => [column, values[i]])) as PlanAuditRow,
    );
    if (rows.length === 0) return;
    await db.orm.insert(planAudit).values(rows).onConflictDoNothing();
  };
}
