/**
 * The daily rate-limit counts in PostgreSQL (the memory store and the SQLite home: store.ts). A
 * flush is one multi-row upsert that keeps the larger count, `GREATEST` in SQL, so instances
 * flushing the same company's day at once keep the largest whatever their order; rows are sorted
 * by company so two flushes lock shared rows in one order and cannot deadlock.
 */
import { eq, sql } from "drizzle-orm";
import { rateLimitDays } from "../../schema/pg-tables.ts";
import type { PgDb } from "../../server/db-postgres.ts";
import type { DayCountRow, DayCountStore } from "./store.ts";

export class PostgresDayCounts implements DayCountStore {
  private readonly loadDay;

  constructor(private readonly db: PgDb) {
    this.loadDay = db.orm
      .select({ company: rateLimitDays.company, count: rateLimitDays.count })
      .from(rateLimitDays)
      .where(eq(rateLimitDays.day, sql.placeholder("day")))
      .prepare("health_rate_limit_day");
  }

  load(day: string): Promise<Array<{ company: string; count: number }>> {
    return this.loadDay.execute({ day });
  }

  async save(rows: readonly DayCountRow[]): Promise<void> {
    if (rows.length === 0) return;
    const values = [...rows]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([company, day, count]) => ({ company, day, count }));
    await this.db.orm
      .insert(rateLimitDays)
      .values(values)
      .onConflictDoUpdate({
        target: [rateLimitDays.company, rateLimitDays.day],
        set: { count: sql`GREATEST(${rateLimitDays}.${sql.identifier("count")}, excluded.${sql.identifier("count")})` },
      });
  }
}
