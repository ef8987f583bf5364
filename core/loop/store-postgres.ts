/**
 * The run store (store.ts) on PostgreSQL, through drizzle over Bun's SQL client: the same
 * operations and the same answers as the SQLite store, one round trip per statement.
 *
 * A write on behalf of an executing run first locks the run's row while checking that this
 * engine still holds it (`running`, its lease owner): `SELECT … FOR UPDATE`, or the conditional
 * `UPDATE … RETURNING` that touches it. Under READ COMMITTED a terminate (or a claim by another
 * engine) that commits first makes that check find nothing, and one that comes later waits for
 * this transaction; so a step is never recorded for a run that was terminated or taken over, as
 * the single-writer SQLite file guarantees by construction. Writes of several rows are one
 * transaction.
 *
 * The two writes of every `step.do` (its attempt starting, its outcome) are one statement each:
 * the ownership check and the rows it guards are data-modifying CTEs of one `WITH`, so a step
 * costs two round trips rather than two transactions of five (bench/engine.ts --postgres).
 *
 * PostgreSQL has no rowid: lists page by (createdAt, id), and the latest run of a loop is the one
 * with the greatest (createdAt, id).
 */
import { and, asc, desc, eq, inArray, lt, lte, or, type SQL, sql } from "drizzle-orm";
import type { BunSQLDatabase } from "drizzle-orm/bun-sql";
import * as tables from "../../schema/pg-tables.ts";
import type { StoredError } from "./protocol.ts";
import {
  type AttemptRow,
  type AttemptSpanRow,
  type FinishedStepWrite,
  type ListedRun,
  type ListQuery,
  type RunRow,
  type RunStore,
  type SleepWrite,
  type StepRow,
  type StepWrite,
  type NewRun,
  toStoredStep,
} from "./store.ts";

const { runs, runSteps, runStepAttempts } = tables;

type Orm = BunSQLDatabase<typeof tables>;

/** The row of a run as it is queued (the engine's insert, and the trigger route's: triggers.ts). */
export function queuedRunRow(run: NewRun): typeof runs.$inferInsert {
  return {
    id: run.id,
    workflowInstanceId: run.workflowInstanceId,
    orgId: run.orgId,
    loopId: run.loopId,
    input: run.input,
    triggerKind: run.triggerKind,
    triggerId: run.triggerId,
    triggerName: run.triggerName,
    traceparent: run.traceparent ?? null,
    status: "queued",
    attempts: 0,
    createdAt: run.now,
    updatedAt: run.now,
  };
}
type Tx = Parameters<Parameters<Orm["transaction"]>[0]>[0];

const UNFINISHED = ["queued", "running", "sleeping"] as const;

export function createPostgresRunStore(db: Orm): RunStore {
  const owned = (runId: string, owner: string) =>
    and(eq(runs.id, runId), eq(runs.leaseOwner, owner), eq(runs.status, "running"));

  /** Locks and touches the run's row if this engine still holds it; false when it does not. */
  async function touchOwned(tx: Tx, runId: string, owner: string, now: number): Promise<boolean> {
    const rows = await tx.update(runs).set({ updatedAt: now }).where(owned(runId, owner)).returning({ id: runs.id });
    return rows.length > 0;
  }

  /** Inside `db.transaction`: a `false` from `write` rolls it back. */
  class NotOwned extends Error {}
  async function atomically(write: (tx: Tx) => Promise<boolean>): Promise<boolean> {
    try {
      return await db.transaction(async (tx) => {
        if (!(await write(tx))) throw new NotOwned();
        return true;
      });
    } catch (error) {
      if (error instanceof NotOwned) return false;
      throw error;
    }
  }

  function upsertFinishedStep(
    tx: Tx,
    write: StepWrite & {
      kind: "do" | "sleep";
      status: "complete" | "errored" | "sleeping";
      result: string | null;
      error: string | null;
      attempts: number;
      wakeAt: number | null;
    },
  ) {
    const finishedAt = write.status === "sleeping" ? null : write.now;
    return tx
      .insert(runSteps)
      .values({
        runId: write.runId,
        key: write.key,
        name: write.name,
        idx: write.idx,
        kind: write.kind,
        status: write.status,
        result: write.result,
        error: write.error,
        attempts: write.attempts,
        wakeAt: write.wakeAt,
        startedAt: write.now,
        finishedAt,
      })
      .onConflictDoUpdate({
        target: [runSteps.runId, runSteps.key],
        set: {
          status: write.status,
          result: write.result,
          error: write.error,
          attempts: write.attempts,
          wakeAt: write.wakeAt,
          finishedAt,
        },
      });
  }

  function finishAttemptLog(
    tx: Tx,
    write: { runId: string; key: string; attempt: number; status: "complete" | "errored"; error: string | null },
    now: number,
  ) {
    return tx
      .update(runStepAttempts)
      .set({
        status: write.status,
        error: sql`COALESCE(${write.error}::text, ${runStepAttempts.error})`,
        finishedAt: sql`COALESCE(${runStepAttempts.finishedAt}, ${now}::bigint)`,
      })
      .where(
        and(
          eq(runStepAttempts.runId, write.runId),
          eq(runStepAttempts.key, write.key),
          eq(runStepAttempts.attempt, write.attempt),
        ),
      );
  }

  /** Closes the steps and attempts a run left open when it ended. */
  async function closeOpen(tx: Tx, runId: string, now: number, error: string, status: "errored" | "terminated") {
    await tx
      .update(runSteps)
      .set({ status, error, finishedAt: now })
      .where(and(eq(runSteps.runId, runId), inArray(runSteps.status, ["running", "sleeping"])));
    await tx
      .update(runStepAttempts)
      .set({ status, error, finishedAt: now })
      .where(and(eq(runStepAttempts.runId, runId), eq(runStepAttempts.status, "running")));
  }

  const released = { leaseOwner: null, leaseExpiresAt: null } as const;

  return {
    async insertRun(run) {
      await db.insert(runs).values(queuedRunRow(run));
    },

    async storedSteps(runId, now) {
      await db
        .update(runSteps)
        .set({ status: "complete", finishedAt: now })
        .where(
          and(
            eq(runSteps.runId, runId),
            eq(runSteps.kind, "sleep"),
            eq(runSteps.status, "sleeping"),
            lte(runSteps.wakeAt, now),
          ),
        );
      const rows = await db.select().from(runSteps).where(eq(runSteps.runId, runId));
      return rows.map(toStoredStep);
    },

    async recordAttempt(write) {
      // One statement: the run's row locked if still ours, then the step and its attempt log row
      // (as SQLite's INSERT OR REPLACE: a retried attempt number starts afresh), or nothing.
      const [row] = await db.execute<{ n: number }>(sql`
        WITH owned AS (
          SELECT id FROM runs
          WHERE id = ${write.runId} AND "leaseOwner" = ${write.owner} AND status = 'running'
          FOR UPDATE
        ), step AS (
          INSERT INTO run_steps ("runId", key, name, idx, kind, status, attempts, "startedAt")
          SELECT id, ${write.key}::text, ${write.name}::text, ${write.idx}::int, 'do', 'running',
            ${write.attempt}::int, ${write.now}::bigint FROM owned
          ON CONFLICT ("runId", key) DO UPDATE
            SET status = 'running', attempts = excluded.attempts, "finishedAt" = NULL
          RETURNING 1
        ), attempt AS (
          INSERT INTO run_step_attempts ("runId", key, attempt, status, "startedAt")
          SELECT id, ${write.key}::text, ${write.attempt}::int, 'running', ${write.now}::bigint FROM owned
          ON CONFLICT ("runId", key, attempt) DO UPDATE
            SET status = 'running', error = NULL, "startedAt" = excluded."startedAt", "finishedAt" = NULL
          RETURNING 1
        )
        SELECT count(*)::int AS n FROM owned`);
      return (row?.n ?? 0) > 0;
    },

    async recordAttemptError(runId, key, attempt, error, now) {
      const errorJson = JSON.stringify(error);
      await db.transaction(async (tx) => {
        await tx
          .update(runSteps)
          .set({ error: errorJson })
          .where(and(eq(runSteps.runId, runId), eq(runSteps.key, key)));
        await finishAttemptLog(tx, { runId, key, attempt, status: "errored", error: errorJson }, now);
      });
    },

    async finishStep(write: FinishedStepWrite) {
      const errorJson = write.error === null ? null : JSON.stringify(write.error);
      // One statement: the run touched (and so locked) if still ours, then the step's outcome and
      // its attempt's, or nothing.
      const [row] = await db.execute<{ n: number }>(sql`
        WITH touched AS (
          UPDATE runs SET "updatedAt" = ${write.now}::bigint
          WHERE id = ${write.runId} AND "leaseOwner" = ${write.owner} AND status = 'running'
          RETURNING id
        ), step AS (
          INSERT INTO run_steps
            ("runId", key, name, idx, kind, status, result, error, attempts, "wakeAt", "startedAt", "finishedAt")
          SELECT id, ${write.key}::text, ${write.name}::text, ${write.idx}::int, 'do', ${write.status}::text,
            ${write.result}::text, ${errorJson}::text, ${write.attempts}::int, NULL::bigint, ${write.now}::bigint,
            ${write.now}::bigint FROM touched
          ON CONFLICT ("runId", key) DO UPDATE
            SET status = excluded.status, result = excluded.result, error = excluded.error,
              attempts = excluded.attempts, "wakeAt" = excluded."wakeAt", "finishedAt" = excluded."finishedAt"
          RETURNING 1
        ), attempt AS (
          UPDATE run_step_attempts
          SET status = ${write.status}::text, error = COALESCE(${errorJson}::text, error),
            "finishedAt" = COALESCE("finishedAt", ${write.now}::bigint)
          WHERE "runId" = ${write.runId} AND key = ${write.key} AND attempt = ${write.attempts}::int
            AND EXISTS (SELECT 1 FROM touched)
          RETURNING 1
        )
        SELECT count(*)::int AS n FROM touched`);
      return (row?.n ?? 0) > 0;
    },

    completeSleep(write: SleepWrite) {
      return atomically(async (tx) => {
        if (!(await touchOwned(tx, write.runId, write.owner, write.now))) return false;
        await upsertFinishedStep(tx, {
          ...write,
          kind: "sleep",
          status: "complete",
          result: null,
          error: null,
          attempts: 1,
        });
        return true;
      });
    },

    suspend(write: SleepWrite) {
      return atomically(async (tx) => {
        const rows = await tx
          .update(runs)
          .set({ status: "sleeping", wakeAt: write.wakeAt, ...released, updatedAt: write.now })
          .where(owned(write.runId, write.owner))
          .returning({ id: runs.id });
        if (rows.length === 0) return false;
        await upsertFinishedStep(tx, {
          ...write,
          kind: "sleep",
          status: "sleeping",
          result: null,
          error: null,
          attempts: 1,
        });
        return true;
      });
    },

    async complete(runId, owner, now, output) {
      const rows = await db
        .update(runs)
        .set({ status: "complete", output, error: null, finishedAt: now, updatedAt: now, ...released, wakeAt: null })
        .where(owned(runId, owner))
        .returning({ id: runs.id });
      return rows.length > 0;
    },

    fail(runId, owner, now, error: StoredError) {
      const errorJson = JSON.stringify(error);
      return atomically(async (tx) => {
        const rows = await tx
          .update(runs)
          .set({
            status: "errored",
            output: null,
            error: errorJson,
            finishedAt: now,
            updatedAt: now,
            ...released,
            wakeAt: null,
          })
          .where(owned(runId, owner))
          .returning({ id: runs.id });
        if (rows.length === 0) return false;
        const ended = JSON.stringify({ name: "RunEnded", message: "the run ended before this step finished" });
        await closeOpen(tx, runId, now, ended, "errored");
        return true;
      });
    },

    async requeue(runId, owner, now) {
      const rows = await db
        .update(runs)
        .set({ status: "queued", ...released, updatedAt: now })
        .where(owned(runId, owner))
        .returning({ id: runs.id });
      return rows.length > 0;
    },

    terminate(orgId, runId, now) {
      const error = JSON.stringify({ name: "Terminated", message: "the run was terminated" });
      return atomically(async (tx) => {
        const rows = await tx
          .update(runs)
          .set({ status: "terminated", error, finishedAt: now, updatedAt: now, ...released, wakeAt: null })
          .where(and(eq(runs.id, runId), eq(runs.orgId, orgId), inArray(runs.status, [...UNFINISHED])))
          .returning({ id: runs.id });
        if (rows.length === 0) return false;
        // A step open at that moment (a sleep, an attempt in flight) was cut short, not failed.
        await closeOpen(tx, runId, now, error, "terminated");
        return true;
      });
    },

    async getRun(orgId, runId) {
      const [row] = await db
        .select()
        .from(runs)
        .where(and(eq(runs.id, runId), eq(runs.orgId, orgId)));
      return (row as RunRow | undefined) ?? null;
    },

    async getSteps(runId) {
      const rows = await db
        .select()
        .from(runSteps)
        .where(eq(runSteps.runId, runId))
        .orderBy(asc(runSteps.idx), asc(runSteps.key));
      return rows as StepRow[];
    },

    async getAttempts(runId) {
      const rows = await db
        .select()
        .from(runStepAttempts)
        .where(eq(runStepAttempts.runId, runId))
        .orderBy(asc(runStepAttempts.key), asc(runStepAttempts.attempt));
      return rows as AttemptRow[];
    },

    async attemptSpans(runId) {
      const rows: AttemptSpanRow[] = await db
        .select({
          key: runStepAttempts.key,
          name: runSteps.name,
          attempt: runStepAttempts.attempt,
          status: runStepAttempts.status,
          startedAt: runStepAttempts.startedAt,
          finishedAt: runStepAttempts.finishedAt,
        })
        .from(runStepAttempts)
        .leftJoin(runSteps, and(eq(runSteps.runId, runStepAttempts.runId), eq(runSteps.key, runStepAttempts.key)))
        .where(eq(runStepAttempts.runId, runId))
        .orderBy(asc(runStepAttempts.startedAt), asc(runStepAttempts.key), asc(runStepAttempts.attempt));
      return rows;
    },

    async loopStats(orgId, loopId, since) {
      const [counts] = await db
        .select({
          runs: sql<number>`count(*)::int`,
          complete: sql<number>`count(*) FILTER (WHERE ${runs.status} = 'complete')::int`,
          errored: sql<number>`count(*) FILTER (WHERE ${runs.status} = 'errored')::int`,
        })
        .from(runs)
        .where(and(eq(runs.orgId, orgId), eq(runs.loopId, loopId), sql`${runs.createdAt} >= ${since}`));
      const [last] = await db
        .select({ status: runs.status, createdAt: runs.createdAt })
        .from(runs)
        .where(and(eq(runs.orgId, orgId), eq(runs.loopId, loopId)))
        .orderBy(desc(runs.createdAt), desc(runs.id))
        .limit(1);
      return {
        runs: counts?.runs ?? 0,
        complete: counts?.complete ?? 0,
        errored: counts?.errored ?? 0,
        lastStatus: last?.status ?? null,
        lastCreatedAt: last?.createdAt ?? null,
      };
    },

    async unfinishedCounts() {
      const rows = await db
        .select({ status: runs.status, n: sql<number>`count(*)::int` })
        .from(runs)
        .where(inArray(runs.status, [...UNFINISHED]))
        .groupBy(runs.status);
      const counts = { queued: 0, running: 0, sleeping: 0 };
      for (const row of rows) if (row.status in counts) counts[row.status as keyof typeof counts] = row.n;
      return counts;
    },

    async list(query: ListQuery) {
      const conditions: Array<SQL | undefined> = [eq(runs.orgId, query.orgId)];
      if (query.loopId !== undefined) conditions.push(eq(runs.loopId, query.loopId));
      if (query.status !== undefined) conditions.push(eq(runs.status, query.status));
      if (query.after !== undefined) {
        const { createdAt, position } = query.after;
        conditions.push(or(lt(runs.createdAt, createdAt), and(eq(runs.createdAt, createdAt), lt(runs.id, position))));
      }
      const rows = await db
        .select()
        .from(runs)
        .where(and(...conditions))
        .orderBy(desc(runs.createdAt), desc(runs.id))
        .limit(query.limit);
      return rows.map((row): ListedRun => ({ ...(row as RunRow), position: row.id }));
    },

    isPosition: (position) => /^[0-9A-Za-z_]{1,64}$/.test(position),
  };
}
