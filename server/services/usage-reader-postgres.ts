/**
 * The usage rollups' reader over PostgreSQL: the same rows and filters as the SQLite reader
 * (usage.ts, `createUsageReader`), and the same summary, computed by the same `summarize`.
 * Two queries per summary, an index range on the rollups and the active runs by status.
 */
import { and, eq, gte, inArray, ne, or, type SQL, sql } from "drizzle-orm";
import { runs, usageMinutes } from "../../schema/pg-tables.ts";
import type { UsageInput } from "../../schema/admin.ts";
import type { PgDb } from "../db-postgres.ts";
import { summarize, type UsageSummary, usageQuery } from "./usage.ts";

export function postgresUsageReader(db: PgDb) {
  return async function summary(orgId: string, input: UsageInput, nowMs = Date.now()): Promise<UsageSummary> {
    const q = usageQuery(orgId, input, nowMs);
    const rollupFilters: SQL[] = [eq(usageMinutes.orgId, q.orgId), gte(usageMinutes.minute, q.fromMinute)];
    if (q.tokenId !== null) rollupFilters.push(eq(usageMinutes.tokenId, q.tokenId));
    if (q.company !== null)
      rollupFilters.push(or(ne(usageMinutes.loopId, ""), eq(usageMinutes.company, q.company)) as SQL);
    if (q.loopId !== null)
      rollupFilters.push(or(eq(usageMinutes.loopId, ""), eq(usageMinutes.loopId, q.loopId)) as SQL);
    const runFilters: SQL[] = [eq(runs.orgId, orgId), inArray(runs.status, ["queued", "running", "sleeping"])];
    if (q.loopId !== null) runFilters.push(eq(runs.loopId, q.loopId));
    if (q.tokenId !== null) runFilters.push(eq(runs.triggerKind, "token"), eq(runs.triggerId, q.tokenId));
    const [rows, active] = await Promise.all([
      db.orm
        .select()
        .from(usageMinutes)
        .where(and(...rollupFilters)),
      db.orm
        .select({ status: runs.status, n: sql<number>`count(*)::int` })
        .from(runs)
        .where(and(...runFilters))
        .groupBy(runs.status),
    ]);
    return summarize(input, q, rows, active, nowMs);
  };
}
