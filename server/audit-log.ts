/**
 * The server-side audit of planning calls: one row per answered call, never the prompt or
 * patient context. Rows are written behind in small batches: the hot path does no synchronous
 * write, and no flush holds the event loop long (a batch of 10,000 rows would stall every
 * request for tens of milliseconds). A hard crash can lose at most one interval of rows.
 */
import type { Database } from "bun:sqlite";
import type { planAudit } from "../schema/tables.ts";

export type PlanAuditRow = typeof planAudit.$inferInsert;

const BATCH_ROWS = 256;

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
    if (this.queue.length === BATCH_ROWS) setImmediate(() => this.flush());
  }

  flush(): void {
    if (this.queue.length === 0) return;
    const rows = this.queue;
    this.queue = [];
    this.flushAll(rows);
  }
}
