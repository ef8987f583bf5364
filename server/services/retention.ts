/**
 * Retention: what the gateway keeps, and for how long. Planning audit rows older than
 * HEALTH_AUDIT_RETENTION_DAYS, finished runs (with their steps and attempts) that finished longer
 * than HEALTH_RUN_RETENTION_DAYS ago, usage rollups older than HEALTH_USAGE_RETENTION_DAYS, and expired admin sessions are deleted by a sweep that runs
 * soon after start and then every hour.
 *
 * A sweep deletes in small batches, one short transaction each, and yields to the event loop
 * between them, so requests and the loop engine never wait on it for more than one batch. Audit
 * rows are written in time order, so the oldest are found by rowid without an index on the hot
 * insert; finished runs have a partial index on finishedAt.
 */
import type { Database } from "bun:sqlite";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface RetentionOptions {
  sqlite: Database;
  auditDays: number;
  runDays: number;
  usageDays: number;
  /** Rows per batch. Default 500. */
  batch?: number;
  now?: () => number;
  log?: (message: string) => void;
}

export interface SweepCounts {
  auditRows: number;
  runs: number;
  usageRows: number;
  sessions: number;
}

export function createRetention(options: RetentionOptions) {
  const { sqlite } = options;
  const batch = options.batch ?? 500;
  const now = options.now ?? Date.now;

  const oldestAudit = sqlite.prepare<{ rowid: number; createdAt: number }, [number]>(
    "SELECT rowid, createdAt FROM plan_audit ORDER BY rowid LIMIT ?1",
  );
  const deleteAudit = sqlite.prepare<void, [number, number]>(
    "DELETE FROM plan_audit WHERE rowid <= ?1 AND createdAt < ?2",
  );
  const finishedRuns = sqlite.prepare<{ id: string }, [number, number]>(
    "SELECT id FROM runs INDEXED BY runs_finished_at WHERE finishedAt IS NOT NULL AND finishedAt < ?1 LIMIT ?2",
  );
  const deleteAttempts = sqlite.prepare<void, [string]>("DELETE FROM run_step_attempts WHERE runId = ?1");
  const deleteSteps = sqlite.prepare<void, [string]>("DELETE FROM run_steps WHERE runId = ?1");
  const deleteRun = sqlite.prepare<void, [string]>("DELETE FROM runs WHERE id = ?1");
  // usage_minutes_minute: the oldest minutes are the first rows of the index.
  const deleteUsage = sqlite.prepare<void, [number, number]>(
    "DELETE FROM usage_minutes WHERE rowid IN (SELECT rowid FROM usage_minutes WHERE minute < ?1 LIMIT ?2)",
  );
  const deleteSessions = sqlite.prepare<void, [number, number]>(
    "DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions WHERE expiresAt < ?1 LIMIT ?2)",
  );

  /** One batch of audit rows; how many went. Stops at the first row young enough to keep. */
  function auditBatch(cutoff: number): number {
    const rows = oldestAudit.all(batch);
    const firstKept = rows.findIndex((row) => row.createdAt >= cutoff);
    const old = firstKept === -1 ? rows : rows.slice(0, firstKept);
    const last = old.at(-1);
    if (last === undefined) return 0;
    return Number(deleteAudit.run(last.rowid, cutoff).changes);
  }

  function runBatch(cutoff: number): number {
    const ids = finishedRuns.all(cutoff, batch).map((row) => row.id);
    sqlite.transaction(() => {
      for (const id of ids) {
        deleteAttempts.run(id);
        deleteSteps.run(id);
        deleteRun.run(id);
      }
    })();
    return ids.length;
  }

  async function drain(step: () => number): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = step();
      total += removed;
      if (removed < batch) return total;
      // Let requests and the loop engine in between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  let running: Promise<SweepCounts> | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let first: ReturnType<typeof setTimeout> | undefined;

  /** Deletes everything past its retention; concurrent calls share one sweep. */
  function sweep(): Promise<SweepCounts> {
    running ??= (async () => {
      try {
        const at = now();
        const counts = {
          auditRows: await drain(() => auditBatch(at - options.auditDays * DAY_MS)),
          runs: await drain(() => runBatch(at - options.runDays * DAY_MS)),
          usageRows: await drain(() =>
            Number(deleteUsage.run(Math.floor((at - options.usageDays * DAY_MS) / 60_000), batch).changes),
          ),
          sessions: await drain(() => Number(deleteSessions.run(at, batch).changes)),
        };
        if (counts.auditRows + counts.runs + counts.usageRows + counts.sessions > 0) {
          options.log?.(
            `Retention: deleted ${counts.auditRows} audit rows, ${counts.runs} finished runs, ${counts.usageRows} usage rows, ${counts.sessions} expired sessions`,
          );
        }
        return counts;
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  const quietly = () => {
    sweep().catch((error: unknown) => {
      options.log?.(
        `Retention sweep failed: ${error instanceof Error ? error.name : "unknown error"}; next hour retries`,
      );
    });
  };

  return {
    sweep,
    /** A first sweep a minute after start (start-up stays quick), then one every hour. */
    start(): void {
      first ??= setTimeout(quietly, 60_000);
      timer ??= setInterval(quietly, 60 * 60_000);
    },
    async stop(): Promise<void> {
      clearTimeout(first);
      clearInterval(timer);
      first = undefined;
      timer = undefined;
      await running;
    },
  };
}
