/**
 * Retention's batches over PostgreSQL (the interface, the sweep and the SQLite store:
 * retention.ts). Each batch is one statement, or for runs one transaction, over at most `limit`
 * rows. PostgreSQL has no rowid in insert order: audit rows and usage rollups are picked by their
 * time column with a LIMIT (a scan that stops at `limit` rows; old rows sit first in a table
 * written in time order), finished runs through the partial index on finishedAt. Runs are locked
 * with `FOR UPDATE SKIP LOCKED`, so instances sweeping at once take different runs.
 */
import { and, inArray, isNotNull, lt, sql } from "drizzle-orm";
import { planAudit, runStepAttempts, runSteps, runs, sessions, usageMinutes } from "../../schema/pg-tables.ts";
import type { PgDb } from "../db-postgres.ts";
import type { RetentionStore } from "./retention.ts";

export class PostgresRetentionStore implements RetentionStore {
  constructor(private readonly db: PgDb) {}

  async deleteAudit(cutoff: number, limit: number): Promise<number> {
    const orm = this.db.orm;
    const old = orm
      .select({ id: planAudit.auditId })
      .from(planAudit)
      .where(lt(planAudit.createdAt, cutoff))
      .limit(limit);
    const deleted = await orm
      .delete(planAudit)
      .where(inArray(planAudit.auditId, old))
      .returning({ id: planAudit.auditId });
    return deleted.length;
  }

  deleteRuns(cutoff: number, limit: number): Promise<number> {
    return this.db.orm.transaction(async (tx) => {
      const picked = await tx
        .select({ id: runs.id })
        .from(runs)
        .where(and(isNotNull(runs.finishedAt), lt(runs.finishedAt, cutoff)))
        .limit(limit)
        .for("update", { skipLocked: true });
      const ids = picked.map((row) => row.id);
      if (ids.length === 0) return 0;
      await tx.delete(runStepAttempts).where(inArray(runStepAttempts.runId, ids));
      await tx.delete(runSteps).where(inArray(runSteps.runId, ids));
      await tx.delete(runs).where(inArray(runs.id, ids));
      return ids.length;
    });
  }

  async deleteUsage(cutoffMinute: number, limit: number): Promise<number> {
    // The key is five columns: rows are picked by their physical address instead.
    const deleted = await this.db.orm.execute(
      sql`DELETE FROM ${usageMinutes} WHERE ctid IN (SELECT ctid FROM ${usageMinutes} WHERE ${usageMinutes.minute} < ${cutoffMinute} LIMIT ${limit}) RETURNING 1`,
    );
    return deleted.length;
  }

  async deleteSessions(now: number, limit: number): Promise<number> {
    const orm = this.db.orm;
    const expired = orm.select({ id: sessions.id }).from(sessions).where(lt(sessions.expiresAt, now)).limit(limit);
    const deleted = await orm.delete(sessions).where(inArray(sessions.id, expired)).returning({ id: sessions.id });
    return deleted.length;
  }
}
