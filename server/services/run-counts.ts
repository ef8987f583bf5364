/**
 * Runs not yet finished, by status, for the `health_runs` gauge of /metrics: one index range per
 * status, in whichever database holds the runs.
 */
import type { Database } from "bun:sqlite";
import { inArray, sql } from "drizzle-orm";
import { runs } from "../../schema/pg-tables.ts";
import type { PgDb } from "../db-postgres.ts";

export const ACTIVE_RUN_STATUSES = ["queued", "running", "sleeping"] as const;
export type ActiveRunCounts = Record<(typeof ACTIVE_RUN_STATUSES)[number], number>;

/** Every active status with its count, zero included. */
export type CountActiveRuns = () => Promise<ActiveRunCounts>;

function byStatus(rows: ReadonlyArray<{ status: string; n: number | string }>): ActiveRunCounts {
  const counts = new Map(rows.map((row) => [row.status, Number(row.n)]));
  return {
    queued: counts.get("queued") ?? 0,
    running: counts.get("running") ?? 0,
    sleeping: counts.get("sleeping") ?? 0,
  };
}

const ACTIVE_RUNS_SQL =
  "SELECT status, COUNT(*) AS n FROM runs WHERE status IN ('queued', 'running', 'sleeping') GROUP BY status";

export function sqliteActiveRuns(sqlite: Database): CountActiveRuns {
  const query = sqlite.prepare<{ status: string; n: number }, []>(ACTIVE_RUNS_SQL);
  return () => Promise.resolve(byStatus(query.all()));
}

export function postgresActiveRuns(db: PgDb): CountActiveRuns {
  // Built once, like the SQLite statement; count(*) is int8, which Bun's client returns as text.
  const query = db.orm
    .select({ status: runs.status, n: sql<number>`count(*)::int` })
    .from(runs)
    .where(inArray(runs.status, [...ACTIVE_RUN_STATUSES]))
    .groupBy(runs.status)
    .prepare("health_active_runs");
  return async () => byStatus(await query.execute());
}
