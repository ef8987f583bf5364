/**
 * Where a trigger is committed: the run row and, when the request sent an Idempotency-Key, the
 * key's record answered with the 202, in one transaction, so a repeated trigger yields the same
 * run and never a second one (server/routes/loops.ts). One implementation per dialect; the route
 * does not know which it has.
 *
 * - SQLite: triggers arriving together share one transaction (group-commit.ts); the run insert and
 *   the key's record are synchronous statements inside it (store.ts, prepareInsertRun;
 *   plugins/idempotency/store.ts).
 * - PostgreSQL: one prepared insert per trigger; with a key, one transaction marking the key's
 *   record done beside the run insert.
 *   The key itself is reserved before the route runs by the PostgreSQL idempotency store
 *   (plugins/idempotency/store-postgres.ts).
 */
import type { Database } from "bun:sqlite";
import { and, eq, sql } from "drizzle-orm";
import type { NewRun } from "../../core/loop/store.ts";
import { prepareInsertRun } from "../../core/loop/store.ts";
import { queuedRunRow } from "../../core/loop/store-postgres.ts";
import { type LocalIdempotencyStore, storedBody } from "../../plugins/idempotency/store.ts";
import { idempotencyKeys, runs } from "../../schema/pg-tables.ts";
import type { PgOrm } from "../db-postgres.ts";
import { GroupCommit } from "./group-commit.ts";

/** The reserved Idempotency-Key of the request, and the answer to store for its replays. */
export interface TriggerKey {
  scope: string;
  key: string;
  status: number;
  body: unknown;
}

export interface TriggerStore {
  /** Commits `run`, and `key`'s record as done when given, in one transaction; resolves once durable. */
  insert(run: NewRun, key: TriggerKey | undefined): Promise<void>;
}

/** `idempotency`: the SQLite store on the same connection, so its record joins the shared transaction. */
export function createSqliteTriggerStore(sqlite: Database, idempotency: LocalIdempotencyStore): TriggerStore {
  const commits = new GroupCommit(sqlite);
  const insertRun = prepareInsertRun(sqlite);
  return {
    insert(run, key) {
      return commits.run(() => {
        insertRun(run);
        if (key !== undefined) idempotency.complete(key.scope, key.key, key.status, key.body, {});
      });
    },
  };
}

/** Any run: only the names of its row's columns are read. */
const PLACEHOLDER_RUN: NewRun = {
  id: "",
  workflowInstanceId: "",
  orgId: "",
  loopId: "",
  input: null,
  triggerKind: "token",
  triggerId: "",
  triggerName: "",
  now: 0,
};

export function createPostgresTriggerStore(orm: PgOrm): TriggerStore {
  // Prepared once: drizzle builds a statement's text on every call otherwise (docs/stack.md), and
  // a trigger without a key is this one statement, atomic on its own: one round trip, where a
  // transaction would take three.
  // Every column of a queued run's row as a placeholder, named after it: the row itself is the
  // statement's parameters (queuedRunRow, one description of that row for both inserts).
  const columns = Object.keys(queuedRunRow(PLACEHOLDER_RUN));
  const placeholders = Object.fromEntries(columns.map((column) => [column, sql.placeholder(column)]));
  const insertRun = orm
    .insert(runs)
    .values(placeholders as unknown as typeof runs.$inferInsert)
    .prepare("health_trigger_run");
  return {
    async insert(run, key) {
      if (key === undefined) {
        await insertRun.execute(queuedRunRow(run));
        return;
      }
      await orm.transaction(async (tx) => {
        await tx.insert(runs).values(queuedRunRow(run));
        await tx
          .update(idempotencyKeys)
          .set({
            status: "done",
            responseStatus: key.status,
            responseBody: storedBody(key.body),
            responseHeaders: "{}",
          })
          .where(and(eq(idempotencyKeys.scope, key.scope), eq(idempotencyKeys.key, key.key)));
      });
    },
  };
}
