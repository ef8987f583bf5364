/**
 * Retention with a clock, one suite over both dialects (test/support/dialects.ts): what is past
 * its retention goes, in batches, and what is not (recent audit rows, unfinished runs, live
 * sessions, recent usage) stays. On PostgreSQL, two sweeps at once delete each run once.
 * PostgreSQL's half skips, saying so, where it is not installed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import * as pgTables from "../schema/pg-tables.ts";
import * as liteTables from "../schema/tables.ts";
import { PostgresRetentionStore } from "../server/services/retention-store-postgres.ts";
import { createRetention, type RetentionStore, SqliteRetentionStore } from "../server/services/retention.ts";
import { type DialectHarness, dialects, type Row, stopPostgres, type TableName } from "./support/dialects.ts";

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.parse("2026-11-24T12:00:00Z");

afterAll(stopPostgres);

// Tables by name (the row types agree between dialects: test/schema-dialects.test.ts).
const liteByName: Readonly<Record<TableName, unknown>> = liteTables;
const pgByName: Readonly<Record<TableName, unknown>> = pgTables;

function storeOf(h: DialectHarness): RetentionStore {
  return h.dialect === "sqlite" ? new SqliteRetentionStore(h.db.sqlite) : new PostgresRetentionStore(h.db);
}

/** Rows into a table of either dialect, in the order given (the audit's insert order matters). */
async function insert<K extends TableName>(h: DialectHarness, table: K, rows: Array<Partial<Row<K>>>): Promise<void> {
  if (h.dialect === "sqlite") {
    h.db.orm
      .insert(liteByName[table] as typeof liteTables.runs)
      .values(rows as never)
      .run();
  } else {
    await h.db.orm.insert(pgByName[table] as typeof pgTables.runs).values(rows as never);
  }
}

async function seed(h: DialectHarness): Promise<void> {
  await h.addOrg({ id: "org_a", slug: "acme" });
  await insert(h, "users", [{ id: "usr_1", email: "a@example.com", passwordHash: "x", createdAt: 0 }]);
  // 95 audit rows from 100 days ago down to 6 days ago, in time order as the writer inserts them.
  await insert(
    h,
    "planAudit",
    Array.from({ length: 95 }, (_, i) => ({
      auditId: `aud_${String(i).padStart(2, "0")}`,
      requestId: `aud_${i}`,
      company: "acme",
      principalKind: "token" as const,
      principalId: "tok_1",
      intent: "build_agent",
      cache: "miss" as const,
      blockedSteps: 0,
      status: 200,
      createdAt: NOW - (100 - i) * DAY,
    })),
  );
  // Runs: finished 40 and 31 days ago (go), finished 5 days ago (stays), still running (stays).
  const runRows = [
    ["run_old", "complete", NOW - 40 * DAY],
    ["run_old_err", "errored", NOW - 31 * DAY],
    ["run_recent", "complete", NOW - 5 * DAY],
    ["run_live", "running", null],
  ] as const;
  for (const [id, status, finishedAt] of runRows) {
    const at = NOW - 41 * DAY;
    await insert(h, "runs", [
      {
        id,
        workflowInstanceId: id,
        orgId: "org_a",
        loopId: "loop_x",
        triggerKind: "token",
        triggerId: "t",
        triggerName: "t",
        status,
        attempts: 1,
        createdAt: at,
        updatedAt: at,
        finishedAt,
      },
    ]);
    await insert(h, "runSteps", [
      { runId: id, key: "s", name: "s", idx: 0, kind: "do", status: "complete", attempts: 1, startedAt: at },
    ]);
    await insert(h, "runStepAttempts", [{ runId: id, key: "s", attempt: 1, status: "complete", startedAt: at }]);
  }
  await insert(h, "sessions", [
    { id: "ses_expired", hash: "ses_expired", userId: "usr_1", orgId: "org_a", createdAt: 0, expiresAt: NOW - DAY },
    { id: "ses_live", hash: "ses_live", userId: "usr_1", orgId: "org_a", createdAt: 0, expiresAt: NOW + DAY },
  ]);
  // Usage rollups: one row a day from 396 to 405 days ago; the 5 older than 400 days go.
  await insert(
    h,
    "usageMinutes",
    Array.from({ length: 10 }, (_, i) => ({
      minute: Math.floor((NOW - (396 + i) * DAY) / 60_000),
      orgId: "org_a",
      company: "acme",
      tokenId: "",
      loopId: "",
      requests: 1,
    })),
  );
}

const retentionOf = (store: RetentionStore) =>
  createRetention({ store, auditDays: 90, runDays: 30, usageDays: 400, batch: 4, now: () => NOW });

describe.each(dialects("the retention tests"))("retention on $name", ({ name, skip, open }) => {
  test.skipIf(skip)(
    "audit rows, finished runs with their steps, usage and expired sessions go once past their retention",
    async () => {
      const h = await open();
      try {
        await seed(h);
        const retention = retentionOf(storeOf(h));
        // Small batches: the 10 audit rows past 90 days take three of them.
        expect(await retention.sweep()).toEqual({ auditRows: 10, runs: 2, usageRows: 5, sessions: 1 });

        const audit = await h.rows("planAudit");
        expect(audit).toHaveLength(85);
        expect(Math.min(...audit.map((row) => row.createdAt))).toBeGreaterThanOrEqual(NOW - 90 * DAY);
        const ids = (rows: Array<{ id?: string; runId?: string }>) => rows.map((r) => r.id ?? r.runId).sort();
        expect(ids(await h.rows("runs"))).toEqual(["run_live", "run_recent"]);
        expect(ids(await h.rows("runSteps"))).toEqual(["run_live", "run_recent"]);
        expect(ids(await h.rows("runStepAttempts"))).toEqual(["run_live", "run_recent"]);
        expect(ids(await h.rows("sessions"))).toEqual(["ses_live"]);
        const usage = await h.rows("usageMinutes");
        expect(usage).toHaveLength(5);
        expect(Math.min(...usage.map((row) => row.minute))).toBeGreaterThanOrEqual(
          Math.floor((NOW - 400 * DAY) / 60_000),
        );

        // Nothing more to do: a second sweep deletes nothing.
        expect(await retention.sweep()).toEqual({ auditRows: 0, runs: 0, usageRows: 0, sessions: 0 });
        await retention.stop();
      } finally {
        await h.close();
      }
    },
  );

  test.skipIf(skip || name === "SQLite")("two instances sweeping at once delete each row once", async () => {
    const h = await open();
    try {
      await seed(h);
      const [a, b] = await Promise.all([retentionOf(storeOf(h)).sweep(), retentionOf(storeOf(h)).sweep()]);
      if (a === undefined || b === undefined) throw new Error("no sweep");
      expect(a.runs + b.runs).toBe(2);
      expect(a.auditRows + b.auditRows).toBe(10);
      expect(a.usageRows + b.usageRows).toBe(5);
      expect(a.sessions + b.sessions).toBe(1);
      expect((await h.rows("runs")).map((r) => r.id).sort()).toEqual(["run_live", "run_recent"]);
      expect(await h.rows("planAudit")).toHaveLength(85);
    } finally {
      await h.close();
    }
  });
});
