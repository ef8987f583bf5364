/** The admin audit in PostgreSQL. Rows are only ever added, so concurrent instances never conflict. */
import { adminAudit } from "../../schema/pg-tables.ts";
import type { PgDb, PgExecutor } from "../db-postgres.ts";
import { type AdminAudit, type AuditEntry, auditRow } from "./admin-audit.ts";

/** Writes one audit row, alone or in the caller's transaction (`tx`), so it commits with the change. */
export async function writeAudit(db: PgExecutor, entry: AuditEntry): Promise<void> {
  await db.insert(adminAudit).values(auditRow(entry));
}

export class PostgresAdminAudit implements AdminAudit {
  constructor(
    private readonly db: PgDb,
    private readonly now: () => number = Date.now,
  ) {}

  async record(entry: Omit<AuditEntry, "at">): Promise<void> {
    await writeAudit(this.db.orm, { ...entry, at: this.now() });
  }
}
