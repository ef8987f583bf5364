/**
 * Persistence of runs and steps: the `RunStore` interface, answered with promises so that one
 * engine runs over either dialect, and its SQLite implementation as prepared statements on the raw
 * bun:sqlite connection (the engine writes on every step and every trigger, where drizzle's query
 * builder costs 10–30× more). Each SQLite operation runs synchronously and resolves with what it
 * computed; the PostgreSQL implementation is store-postgres.ts.
 *
 * Every write made on behalf of an executing run is conditioned on the run still being `running`
 * under this engine's lease: if another process took the run over, or it was terminated, the
 * write changes nothing and the engine learns it lost the run. Writes of several rows are one
 * transaction.
 */
import type { Database } from "bun:sqlite";
import type { runStepAttempts, runSteps, runs } from "../../schema/tables.ts";
import type { StoredError, StoredStep } from "./protocol.ts";

/** Rows as drizzle infers them from schema/tables.ts: one definition of the columns. */
export type RunRow = typeof runs.$inferSelect;
/**
 * A row of a list page, with its position among rows of the same `createdAt`: SQLite's rowid (as
 * text), PostgreSQL's run id. Callers pass it back in `ListQuery.after` and never parse it.
 */
export type ListedRun = RunRow & { position: string };
export type StepRow = typeof runSteps.$inferSelect;
export type AttemptRow = typeof runStepAttempts.$inferSelect;
export type RunStatus = RunRow["status"];
export type TriggerKind = RunRow["triggerKind"];

export type NewRun = Pick<
  RunRow,
  "id" | "workflowInstanceId" | "orgId" | "loopId" | "input" | "triggerKind" | "triggerId" | "triggerName"
> & { now: number; traceparent?: string | undefined };

/** What a claim returns: enough to start executing the run. */
export type ClaimedRun = Pick<
  RunRow,
  "id" | "orgId" | "loopId" | "input" | "createdAt" | "triggerKind" | "triggerId" | "traceparent"
>;

export type StepWrite = {
  runId: string;
  key: string;
  name: string;
  idx: number;
  owner: string;
  now: number;
};

export interface ListQuery {
  orgId: string;
  loopId?: string;
  status?: RunStatus;
  limit: number;
  /** Position after which to continue, from the previous page: the last row's createdAt and position. */
  after?: { createdAt: number; position: string };
}

/** A step attempt with its step's name, for the spans of a run (server/services/tracing.ts). */
export interface AttemptSpanRow {
  key: string;
  name: string | null;
  attempt: number;
  status: string;
  startedAt: number;
  finishedAt: number | null;
}

export type UnfinishedCounts = Record<"queued" | "running" | "sleeping", number>;

export type AttemptWrite = StepWrite & { attempt: number };
export type FinishedStepWrite = StepWrite & {
  status: "complete" | "errored";
  result: string | null;
  error: StoredError | null;
  attempts: number;
};
export type SleepWrite = StepWrite & { wakeAt: number };

/**
 * Runs, steps and attempts in one dialect. Writes on behalf of an executing run (`owner`) resolve
 * false, having written nothing, when the run is no longer `running` under that owner's lease.
 */
export interface RunStore {
  insertRun(run: NewRun): Promise<void>;
  /** The run's steps for a replay; sleeps whose time has come are completed first. */
  storedSteps(runId: string, now: number): Promise<StoredStep[]>;
  /** Records that an attempt starts; false when the run is no longer ours (nothing is written). */
  recordAttempt(write: AttemptWrite): Promise<boolean>;
  recordAttemptError(runId: string, key: string, attempt: number, error: StoredError, now: number): Promise<void>;
  /** Persists a finished `step.do`; false when the run is no longer ours. */
  finishStep(write: FinishedStepWrite): Promise<boolean>;
  /** A sleep already due when reached: recorded as complete, and the run goes on. */
  completeSleep(write: SleepWrite): Promise<boolean>;
  /** Records the sleep and releases the run until `wakeAt`; false when the run is no longer ours. */
  suspend(write: SleepWrite): Promise<boolean>;
  complete(runId: string, owner: string, now: number, output: string | null): Promise<boolean>;
  /** Errors the run and any step left open by it; false when the run is no longer ours. */
  fail(runId: string, owner: string, now: number, error: StoredError): Promise<boolean>;
  /** Gives a run this engine holds back to the queue. */
  requeue(runId: string, owner: string, now: number): Promise<boolean>;
  /** Terminates an unfinished run; false when there is no such unfinished run in the org. */
  terminate(orgId: string, runId: string, now: number): Promise<boolean>;
  getRun(orgId: string, runId: string): Promise<RunRow | null>;
  getSteps(runId: string): Promise<StepRow[]>;
  getAttempts(runId: string): Promise<AttemptRow[]>;
  /** Every attempt of a run with its step's name, in the order they started. */
  attemptSpans(runId: string): Promise<AttemptSpanRow[]>;
  /** Per loop: runs created since `since` by final status, and the latest run's status. */
  loopStats(orgId: string, loopId: string, since: number): Promise<LoopStatsRow>;
  /** Unfinished runs of every organization by status (metrics). */
  unfinishedCounts(): Promise<UnfinishedCounts>;
  /** Newest first (createdAt, then position, descending). */
  list(query: ListQuery): Promise<ListedRun[]>;
  /** Whether `position` (from a decoded cursor) is one this dialect issues. */
  isPosition(position: string): boolean;
}

const RUN_COLUMNS =
  "id, workflowInstanceId, orgId, loopId, input, triggerKind, triggerId, triggerName, status, output, error, " +
  "attempts, leaseOwner, leaseExpiresAt, wakeAt, createdAt, updatedAt, startedAt, finishedAt";

const OWNED = "id = $runId AND leaseOwner = $owner AND status = 'running'";

export interface LoopStatsRow {
  runs: number;
  complete: number;
  errored: number;
  lastStatus: RunStatus | null;
  lastCreatedAt: number | null;
}

/**
 * The run insert alone, synchronous: the trigger route's group commit (server/routes/triggers.ts)
 * runs it inside the shared SQLite transaction, beside the Idempotency-Key record.
 */
export function prepareInsertRun(sqlite: Database): (run: NewRun) => void {
  const insertRun = sqlite.prepare<
    void,
    [string, string, string, string, string | null, string, string, string, number, number, string | null]
  >(
    "INSERT INTO runs (id, workflowInstanceId, orgId, loopId, input, triggerKind, triggerId, triggerName, status, attempts, createdAt, updatedAt, traceparent) " +
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'queued', 0, ?9, ?10, ?11)",
  );
  return (run) => {
    insertRun.run(
      run.id,
      run.workflowInstanceId,
      run.orgId,
      run.loopId,
      run.input,
      run.triggerKind,
      run.triggerId,
      run.triggerName,
      run.now,
      run.now,
      run.traceparent ?? null,
    );
  };
}

/**
 * The SQLite store. Each operation is synchronous underneath (one prepared statement, or a few in
 * one BEGIN IMMEDIATE), so nothing interleaves with it; a thrown error becomes a rejection.
 */
export function createRunStore(sqlite: Database): RunStore {
  const ops = createSqliteOps(sqlite);
  return {
    insertRun: async (run) => ops.insertRun(run),
    storedSteps: async (runId, now) => ops.storedSteps(runId, now),
    recordAttempt: async (write) => ops.recordAttempt(write),
    recordAttemptError: async (runId, key, attempt, error, now) =>
      ops.recordAttemptError(runId, key, attempt, error, now),
    finishStep: async (write) => ops.finishStep(write),
    completeSleep: async (write) => ops.completeSleep(write),
    suspend: async (write) => ops.suspend(write),
    complete: async (runId, owner, now, output) => ops.complete(runId, owner, now, output),
    fail: async (runId, owner, now, error) => ops.fail(runId, owner, now, error),
    requeue: async (runId, owner, now) => ops.requeue(runId, owner, now),
    terminate: async (orgId, runId, now) => ops.terminate(orgId, runId, now),
    getRun: async (orgId, runId) => ops.getRun(orgId, runId),
    getSteps: async (runId) => ops.getSteps(runId),
    getAttempts: async (runId) => ops.getAttempts(runId),
    attemptSpans: async (runId) => ops.attemptSpans(runId),
    loopStats: async (orgId, loopId, since) => ops.loopStats(orgId, loopId, since),
    unfinishedCounts: async () => ops.unfinishedCounts(),
    list: async (query) => ops.list(query),
    isPosition: (position) => /^\d{1,15}$/.test(position),
  };
}

function createSqliteOps(sqlite: Database) {
  const insertRun = prepareInsertRun(sqlite);

  const completeDueSleeps = sqlite.prepare<void, { runId: string; now: number }>(
    "UPDATE run_steps SET status = 'complete', finishedAt = $now WHERE runId = $runId AND kind = 'sleep' AND status = 'sleeping' AND wakeAt <= $now",
  );
  const selectStoredSteps = sqlite.prepare<StepRow, [string]>("SELECT * FROM run_steps WHERE runId = ?1");
  const selectSteps = sqlite.prepare<StepRow, [string]>("SELECT * FROM run_steps WHERE runId = ?1 ORDER BY idx, key");

  const touchOwned = sqlite.prepare<void, { runId: string; owner: string; now: number }>(
    `UPDATE runs SET updatedAt = $now WHERE ${OWNED}`,
  );
  const upsertAttempt = sqlite.prepare<void, StepWrite & { attempt: number }>(
    "INSERT INTO run_steps (runId, key, name, idx, kind, status, attempts, startedAt) " +
      "SELECT $runId, $key, $name, $idx, 'do', 'running', $attempt, $now " +
      `WHERE EXISTS (SELECT 1 FROM runs WHERE ${OWNED}) ` +
      "ON CONFLICT (runId, key) DO UPDATE SET status = 'running', attempts = excluded.attempts, finishedAt = NULL",
  );
  const recordAttemptError = sqlite.prepare<void, { runId: string; key: string; error: string }>(
    "UPDATE run_steps SET error = $error WHERE runId = $runId AND key = $key",
  );
  // The attempt log: one row per try of a step.do, written beside the step row it explains.
  const startAttemptLog = sqlite.prepare<void, { runId: string; key: string; attempt: number; now: number }>(
    "INSERT OR REPLACE INTO run_step_attempts (runId, key, attempt, status, startedAt) VALUES ($runId, $key, $attempt, 'running', $now)",
  );
  const finishAttemptLog = sqlite.prepare<
    void,
    { runId: string; key: string; attempt: number; status: string; error: string | null; now: number }
  >(
    "UPDATE run_step_attempts SET status = $status, error = COALESCE($error, error), finishedAt = COALESCE(finishedAt, $now) " +
      "WHERE runId = $runId AND key = $key AND attempt = $attempt",
  );
  const closeOpenAttempts = sqlite.prepare<void, { runId: string; status: string; error: string; now: number }>(
    "UPDATE run_step_attempts SET status = $status, error = $error, finishedAt = $now WHERE runId = $runId AND status = 'running'",
  );
  const selectAttempts = sqlite.prepare<AttemptRow, [string]>(
    "SELECT * FROM run_step_attempts WHERE runId = ?1 ORDER BY key, attempt",
  );
  const upsertFinishedStep = sqlite.prepare<
    void,
    StepWrite & {
      kind: "do" | "sleep";
      status: string;
      result: string | null;
      error: string | null;
      attempts: number;
      wakeAt: number | null;
    }
  >(
    "INSERT INTO run_steps (runId, key, name, idx, kind, status, result, error, attempts, wakeAt, startedAt, finishedAt) " +
      "VALUES ($runId, $key, $name, $idx, $kind, $status, $result, $error, $attempts, $wakeAt, $now, CASE WHEN $status = 'sleeping' THEN NULL ELSE $now END) " +
      "ON CONFLICT (runId, key) DO UPDATE SET status = excluded.status, result = excluded.result, error = excluded.error, " +
      "attempts = excluded.attempts, wakeAt = excluded.wakeAt, finishedAt = excluded.finishedAt",
  );
  const suspendOwned = sqlite.prepare<void, { runId: string; owner: string; now: number; wakeAt: number }>(
    "UPDATE runs SET status = 'sleeping', wakeAt = $wakeAt, leaseOwner = NULL, leaseExpiresAt = NULL, updatedAt = $now " +
      `WHERE ${OWNED}`,
  );
  const finishOwned = sqlite.prepare<
    void,
    { runId: string; owner: string; now: number; status: RunStatus; output: string | null; error: string | null }
  >(
    "UPDATE runs SET status = $status, output = $output, error = $error, finishedAt = $now, updatedAt = $now, " +
      `leaseOwner = NULL, leaseExpiresAt = NULL, wakeAt = NULL WHERE ${OWNED}`,
  );
  const closeOpenSteps = sqlite.prepare<void, { runId: string; now: number; error: string; status: string }>(
    "UPDATE run_steps SET status = $status, error = $error, finishedAt = $now WHERE runId = $runId AND status IN ('running', 'sleeping')",
  );
  const requeueOwned = sqlite.prepare<void, { runId: string; owner: string; now: number }>(
    `UPDATE runs SET status = 'queued', leaseOwner = NULL, leaseExpiresAt = NULL, updatedAt = $now WHERE ${OWNED}`,
  );
  const terminateRun = sqlite.prepare<void, { runId: string; orgId: string; now: number; error: string }>(
    "UPDATE runs SET status = 'terminated', error = $error, finishedAt = $now, updatedAt = $now, leaseOwner = NULL, " +
      "leaseExpiresAt = NULL, wakeAt = NULL WHERE id = $runId AND orgId = $orgId AND status IN ('queued', 'running', 'sleeping')",
  );
  const selectAttemptSpans = sqlite.prepare<AttemptSpanRow, [string]>(
    "SELECT a.key, s.name, a.attempt, a.status, a.startedAt, a.finishedAt FROM run_step_attempts a " +
      "LEFT JOIN run_steps s ON s.runId = a.runId AND s.key = a.key WHERE a.runId = ?1 ORDER BY a.startedAt, a.key, a.attempt",
  );
  // An index range per status (runs_status_wake).
  const selectUnfinished = sqlite.prepare<{ status: keyof UnfinishedCounts; n: number }, []>(
    "SELECT status, COUNT(*) AS n FROM runs WHERE status IN ('queued', 'running', 'sleeping') GROUP BY status",
  );
  const selectRun = sqlite.prepare<RunRow, [string, string]>(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?1 AND orgId = ?2`,
  );

  /** Runs `write` in one transaction when it reports success, and rolls it back otherwise. */
  function atomically(write: () => boolean): boolean {
    sqlite.run("BEGIN IMMEDIATE");
    let committed = false;
    try {
      if (write()) {
        sqlite.run("COMMIT");
        committed = true;
        return true;
      }
      return false;
    } finally {
      if (!committed) sqlite.run("ROLLBACK");
    }
  }

  return {
    insertRun,

    /** Sleeps whose time has come are complete before the replay starts, so they return at once. */
    storedSteps(runId: string, now: number): StoredStep[] {
      completeDueSleeps.run({ runId, now });
      return selectStoredSteps.all(runId).map(toStoredStep);
    },

    /** Records that an attempt starts; false when the run is no longer ours (nothing is written). */
    recordAttempt(write: AttemptWrite): boolean {
      return atomically(() => {
        if (upsertAttempt.run(write).changes === 0) return false;
        startAttemptLog.run({ runId: write.runId, key: write.key, attempt: write.attempt, now: write.now });
        return true;
      });
    },

    recordAttemptError(runId: string, key: string, attempt: number, error: StoredError, now: number): void {
      const errorJson = JSON.stringify(error);
      atomically(() => {
        recordAttemptError.run({ runId, key, error: errorJson });
        finishAttemptLog.run({ runId, key, attempt, status: "errored", error: errorJson, now });
        return true;
      });
    },

    /** Persists a finished `step.do`; false when the run is no longer ours. */
    finishStep(write: FinishedStepWrite): boolean {
      return atomically(() => {
        if (touchOwned.run({ runId: write.runId, owner: write.owner, now: write.now }).changes === 0) return false;
        upsertFinishedStep.run({
          runId: write.runId,
          key: write.key,
          name: write.name,
          idx: write.idx,
          owner: write.owner,
          now: write.now,
          kind: "do",
          status: write.status,
          result: write.result,
          error: write.error === null ? null : JSON.stringify(write.error),
          attempts: write.attempts,
          wakeAt: null,
        });
        finishAttemptLog.run({
          runId: write.runId,
          key: write.key,
          attempt: write.attempts,
          status: write.status,
          error: write.error === null ? null : JSON.stringify(write.error),
          now: write.now,
        });
        return true;
      });
    },

    /** A sleep already due when reached: recorded as complete, and the run goes on. */
    completeSleep(write: StepWrite & { wakeAt: number }): boolean {
      return atomically(() => {
        if (touchOwned.run({ runId: write.runId, owner: write.owner, now: write.now }).changes === 0) return false;
        upsertFinishedStep.run({ ...write, kind: "sleep", status: "complete", result: null, error: null, attempts: 1 });
        return true;
      });
    },

    /** Records the sleep and releases the run until `wakeAt`; false when the run is no longer ours. */
    suspend(write: StepWrite & { wakeAt: number }): boolean {
      return atomically(() => {
        if (
          suspendOwned.run({ runId: write.runId, owner: write.owner, now: write.now, wakeAt: write.wakeAt }).changes ===
          0
        ) {
          return false;
        }
        upsertFinishedStep.run({ ...write, kind: "sleep", status: "sleeping", result: null, error: null, attempts: 1 });
        return true;
      });
    },

    complete(runId: string, owner: string, now: number, output: string | null): boolean {
      return finishOwned.run({ runId, owner, now, status: "complete", output, error: null }).changes > 0;
    },

    /** Errors the run and any step left open by it; false when the run is no longer ours. */
    fail(runId: string, owner: string, now: number, error: StoredError): boolean {
      const errorJson = JSON.stringify(error);
      return atomically(() => {
        if (finishOwned.run({ runId, owner, now, status: "errored", output: null, error: errorJson }).changes === 0)
          return false;
        const ended = JSON.stringify({ name: "RunEnded", message: "the run ended before this step finished" });
        closeOpenSteps.run({ runId, now, error: ended, status: "errored" });
        closeOpenAttempts.run({ runId, now, error: ended, status: "errored" });
        return true;
      });
    },

    requeue(runId: string, owner: string, now: number): boolean {
      return requeueOwned.run({ runId, owner, now }).changes > 0;
    },

    /** Terminates an unfinished run; false when there is no such unfinished run in the org. */
    terminate(orgId: string, runId: string, now: number): boolean {
      const error = JSON.stringify({ name: "Terminated", message: "the run was terminated" });
      return atomically(() => {
        if (terminateRun.run({ runId, orgId, now, error }).changes === 0) return false;
        // A step open at that moment (a sleep, an attempt in flight) was cut short, not failed.
        closeOpenSteps.run({ runId, now, error, status: "terminated" });
        closeOpenAttempts.run({ runId, now, error, status: "terminated" });
        return true;
      });
    },

    getRun(orgId: string, runId: string): RunRow | null {
      return selectRun.get(runId, orgId);
    },

    getSteps(runId: string): StepRow[] {
      return selectSteps.all(runId);
    },

    getAttempts(runId: string): AttemptRow[] {
      return selectAttempts.all(runId);
    },

    attemptSpans(runId: string): AttemptSpanRow[] {
      return selectAttemptSpans.all(runId);
    },

    unfinishedCounts(): UnfinishedCounts {
      const counts: UnfinishedCounts = { queued: 0, running: 0, sleeping: 0 };
      for (const row of selectUnfinished.all()) counts[row.status] = row.n;
      return counts;
    },

    /** Per loop: runs created since `since` by final status, and the latest run's status. */
    loopStats(orgId: string, loopId: string, since: number): LoopStatsRow {
      const counts = sqlite
        .query<Omit<LoopStatsRow, "lastStatus" | "lastCreatedAt">, [string, string, number]>(
          "SELECT COUNT(*) AS runs, COALESCE(SUM(status = 'complete'), 0) AS complete, " +
            "COALESCE(SUM(status = 'errored'), 0) AS errored FROM runs WHERE orgId = ?1 AND loopId = ?2 AND createdAt >= ?3",
        )
        .get(orgId, loopId, since) ?? { runs: 0, complete: 0, errored: 0 };
      const last = sqlite
        .query<{ status: RunStatus; createdAt: number }, [string, string]>(
          "SELECT status, createdAt FROM runs WHERE orgId = ?1 AND loopId = ?2 ORDER BY createdAt DESC, rowid DESC LIMIT 1",
        )
        .get(orgId, loopId);
      return { ...counts, lastStatus: last?.status ?? null, lastCreatedAt: last?.createdAt ?? null };
    },

    list(query: ListQuery): ListedRun[] {
      const conditions = ["orgId = $orgId"];
      const params: Record<string, string | number> = { orgId: query.orgId, limit: query.limit };
      if (query.loopId !== undefined) {
        conditions.push("loopId = $loopId");
        params.loopId = query.loopId;
      }
      if (query.status !== undefined) {
        conditions.push("status = $status");
        params.status = query.status;
      }
      if (query.after !== undefined) {
        conditions.push("(createdAt < $afterCreatedAt OR (createdAt = $afterCreatedAt AND rowid < $afterRowid))");
        params.afterCreatedAt = query.after.createdAt;
        params.afterRowid = Number(query.after.position);
      }
      // query() caches the compiled statement per SQL text, and there are only 8 shapes.
      const sql = `SELECT CAST(rowid AS TEXT) AS position, ${RUN_COLUMNS} FROM runs WHERE ${conditions.join(" AND ")} ORDER BY createdAt DESC, rowid DESC LIMIT $limit`;
      return sqlite.query<ListedRun, Record<string, string | number>>(sql).all(params);
    },
  };
}

/** A step row as the replay reads it; the rows of both dialects agree (schema/pg-tables.ts). */
export function toStoredStep(row: StepRow): StoredStep {
  const error = parseStoredError(row.error);
  return {
    key: row.key,
    kind: row.kind,
    status: row.status,
    result: row.result,
    errorName: error?.name ?? null,
    errorMessage: error?.message ?? null,
    attempts: row.attempts,
    wakeAt: row.wakeAt,
  };
}

export function parseStoredError(text: string | null): StoredError | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && "name" in value && "message" in value) {
      return { name: String(value.name), message: String(value.message) };
    }
  } catch {
    // Fall through: an unreadable error column is still worth showing as text.
  }
  return { name: "Error", message: text };
}
