/**
 * Retention: what the gateway keeps, and for how long. Planning audit rows older than
 * HEALTH_AUDIT_RETENTION_DAYS, finished runs (with their steps and attempts) that finished longer
 * than HEALTH_RUN_RETENTION_DAYS ago, usage rollups older than HEALTH_USAGE_RETENTION_DAYS, and expired admin sessions are deleted by a sweep that runs
 * soon after start and then every hour.
 *
 * A sweep deletes in small batches, one short transaction each, and yields to the event loop
 * between them, so requests and the loop engine never wait on it for more than one batch. Audit
 * rows are written in time order, so over SQLite the oldest are found by rowid without an index on
 * the hot insert; finished runs have a partial index on finishedAt. The batches are a
 * `RetentionStore`, one per dialect.
 */
import type { Database } from "bun:sqlite";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * One batch of each kind of deletion, each in a short transaction of its own; each returns how many
 * went, and a batch smaller than `limit` means there is nothing more. Implementations: the SQLite
 * one below (the server's statements) and retention-store-postgres.ts, one suite over both
 * (test/retention.test.ts).
 */
export interface RetentionStore {
  /** Planning audit rows created before `cutoff`, oldest first. */
  deleteAudit(cutoff: number, limit: number): Promise<number>;
  /** Runs finished before `cutoff`, with their steps and attempts; unfinished runs never. */
  deleteRuns(cutoff: number, limit: number): Promise<number>;
  /** Usage rollups of minutes (since the epoch) before `cutoffMinute`. */
  deleteUsage(cutoffMinute: number, limit: number): Promise<number>;
  /** Sessions that expired before `now`. */
  deleteSessions(now: number, limit: number): Promise<number>;
}

export class SqliteRetentionStore implements RetentionStore {
  private readonly oldestAudit;
  private readonly deleteAuditUpTo;
  private readonly finishedRuns;
  private readonly deleteAttempts;
  private readonly deleteSteps;
  private readonly deleteRun;
  private readonly deleteUsageRows;
  private readonly deleteSessionRows;

  constructor(private readonly sqlite: Database) {
    this.oldestAudit = sqlite.prepare<{ rowid: number; createdAt: number }, [number]>(
      "SELECT rowid, createdAt FROM plan_audit ORDER BY rowid LIMIT ?1",
    );
    this.deleteAuditUpTo = sqlite.prepare<void, [number, number]>(
      "DELETE FROM plan_audit WHERE rowid <= ?1 AND createdAt < ?2",
    );
    this.finishedRuns = sqlite.prepare<{ id: string }, [number, number]>(
      "SELECT id FROM runs INDEXED BY runs_finished_at WHERE finishedAt IS NOT NULL AND finishedAt < ?1 LIMIT ?2",
    );
    this.deleteAttempts = sqlite.prepare<void, [string]>("DELETE FROM run_step_attempts WHERE runId = ?1");
    this.deleteSteps = sqlite.prepare<void, [string]>("DELETE FROM run_steps WHERE runId = ?1");
    this.deleteRun = sqlite.prepare<void, [string]>("DELETE FROM runs WHERE id = ?1");
    // usage_minutes_minute: the oldest minutes are the first rows of the index.
    this.deleteUsageRows = sqlite.prepare<void, [number, number]>(
      "DELETE FROM usage_minutes WHERE rowid IN (SELECT rowid FROM usage_minutes WHERE minute < ?1 LIMIT ?2)",
    );
    this.deleteSessionRows = sqlite.prepare<void, [number, number]>(
      "DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions WHERE expiresAt < ?1 LIMIT ?2)",
    );
  }

  /** Audit rows are written in time order: the oldest are found by rowid, with no index on the hot insert. Stops at the first row young enough to keep. */
  async deleteAudit(cutoff: number, limit: number): Promise<number> {
    const rows = this.oldestAudit.all(limit);
    const firstKept = rows.findIndex((row) => row.createdAt >= cutoff);
    const old = firstKept === -1 ? rows : rows.slice(0, firstKept);
    const last = old.at(-1);
    if (last === undefined) return 0;
    return Number(this.deleteAuditUpTo.run(last.rowid, cutoff).changes);
  }

  async deleteRuns(cutoff: number, limit: number): Promise<number> {
    const ids = this.finishedRuns.all(cutoff, limit).map((row) => row.id);
    this.sqlite
      .transaction(() => {
        for (const id of ids) {
          this.deleteAttempts.run(id);
          this.deleteSteps.run(id);
          this.deleteRun.run(id);
        }
      })
      .immediate();
    return ids.length;
  }

  async deleteUsage(cutoffMinute: number, limit: number): Promise<number> {
    return Number(this.deleteUsageRows.run(cutoffMinute, limit).changes);
  }

  async deleteSessions(now: number, limit: number): Promise<number> {
    return Number(this.deleteSessionRows.run(now, limit).changes);
  }
}

export interface RetentionOptions {
  store: RetentionStore;
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
  const { store } = options;
  const batch = options.batch ?? 500;
  const now = options.now ?? Date.now;

  async function drain(step: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = await step();
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
          auditRows: await drain(() => store.deleteAudit(at - options.auditDays * DAY_MS, batch)),
          runs: await drain(() => store.deleteRuns(at - options.runDays * DAY_MS, batch)),
          usageRows: await drain(() =>
            store.deleteUsage(Math.floor((at - options.usageDays * DAY_MS) / 60_000), batch),
          ),
          sessions: await drain(() => store.deleteSessions(at, batch)),
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
