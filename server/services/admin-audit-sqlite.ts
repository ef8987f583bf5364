/** The admin audit in the SQLite database: one INSERT, committed when the call returns. */
import { adminAudit } from "../../schema/tables.ts";
import type { Db } from "../db.ts";
import { type AdminAudit, type AuditEntry, auditRow } from "./admin-audit.ts";

/** Writes one audit row; inside a caller's transaction when there is one (SQLite stores are synchronous). */
export function writeAudit(db: Db, entry: AuditEntry): void {
  db.orm.insert(adminAudit).values(auditRow(entry)).run();
}

export class SqliteAdminAudit implements AdminAudit {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async record(entry: Omit<AuditEntry, "at">): Promise<void> {
    writeAudit(this.db, { ...entry, at: this.now() });
  }
}
