/**
 * The server-side audit of planning calls: one row per answered call, never the prompt or
 * patient context. Rows are written behind in batches so the hot path does no synchronous
 * write; a hard crash can lose at most one flush interval of rows.
 */
import type { Database } from "bun:sqlite";
import type { planAudit } from "../schema/tables.ts";

export type PlanAuditRow = typeof planAudit.$inferInsert;

export class AuditLog {
  private queue: PlanAuditRow[] = [];
  private readonly insert;

  constructor(sqlite: Database) {
    this.insert = sqlite.query(
      `INSERT OR IGNORE INTO plan_audit (auditId, requestId, company, principalKind, principalId, intent, cache, upstreamLatencyMs, blockedSteps, status, createdAt)
       VALUES ($auditId, $requestId, $company, $principalKind, $principalId, $intent, $cache, $upstreamLatencyMs, $blockedSteps, $status, $createdAt)`,
    );
    this.flushAll = sqlite.transaction((rows: PlanAuditRow[]) => {
      for (const row of rows) this.insert.run({ ...row, upstreamLatencyMs: row.upstreamLatencyMs ?? null });
    });
  }

  private readonly flushAll: (rows: PlanAuditRow[]) => void;

  record(row: PlanAuditRow): void {
    this.queue.push(row);
  }

  flush(): void {
    if (this.queue.length === 0) return;
    const rows = this.queue;
    this.queue = [];
    this.flushAll(rows);
  }
}
