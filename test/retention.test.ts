/**
 * Retention with a clock: on a real database file, what is past its retention goes, in batches,
 * and what is not (recent audit rows, unfinished runs, live sessions) stays.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../server/db.ts";
import { createRetention } from "../server/services/retention.ts";
import { tempDir } from "./support/temp-dir.ts";

const DAY = 24 * 60 * 60 * 1000;
const NOW = Date.parse("2026-11-24T12:00:00Z");

test("audit rows, finished runs with their steps, and expired sessions go once past their retention", async () => {
  using dir = tempDir("health-retention-");
  const db = openDatabase(join(dir, "health.db"));
  try {
    const audit = db.sqlite.prepare(
      "INSERT INTO plan_audit (auditId, requestId, company, principalKind, principalId, intent, cache, blockedSteps, status, createdAt) " +
        "VALUES (?1, ?1, 'acme', 'token', 'tok_1', 'build_agent', 'miss', 0, 200, ?2)",
    );
    const run = db.sqlite.prepare(
      "INSERT INTO runs (id, workflowInstanceId, orgId, loopId, triggerKind, triggerId, triggerName, status, attempts, createdAt, updatedAt, finishedAt) " +
        "VALUES (?1, ?1, 'org_a', 'loop_x', 'token', 't', 't', ?2, 1, ?3, ?3, ?4)",
    );
    const step = db.sqlite.prepare(
      "INSERT INTO run_steps (runId, key, name, idx, kind, status, attempts, startedAt) VALUES (?1, 's', 's', 0, 'do', 'complete', 1, ?2)",
    );
    const attempt = db.sqlite.prepare(
      "INSERT INTO run_step_attempts (runId, key, attempt, status, startedAt) VALUES (?1, 's', 1, 'complete', ?2)",
    );
    db.sqlite.transaction(() => {
      // 95 audit rows from 100 days ago down to 6 days ago, in time order as the writer inserts them.
      for (let i = 0; i < 95; i++) audit.run(`aud_${i}`, NOW - (100 - i) * DAY);
      // Runs: finished 40 days ago (go), finished 5 days ago (stay), started 40 days ago and still running (stays).
      for (const [id, status, finishedAt] of [
        ["run_old", "complete", NOW - 40 * DAY],
        ["run_old_err", "errored", NOW - 31 * DAY],
        ["run_recent", "complete", NOW - 5 * DAY],
        ["run_live", "running", null],
      ] as const) {
        run.run(id, status, NOW - 41 * DAY, finishedAt);
        step.run(id, NOW - 41 * DAY);
        attempt.run(id, NOW - 41 * DAY);
      }
      db.sqlite.run(
        "INSERT INTO organizations (id, slug, name, createdAt) VALUES ('org_a', 'acme', 'Acme', 0) ON CONFLICT DO NOTHING",
      );
      db.sqlite.run("INSERT INTO users (id, email, passwordHash, createdAt) VALUES ('usr_1', 'a@example.com', 'x', 0)");
    })();
    const session = db.sqlite.prepare(
      "INSERT INTO sessions (id, hash, userId, orgId, createdAt, expiresAt) VALUES (?1, ?1, 'usr_1', 'org_a', 0, ?2)",
    );
    session.run("ses_expired", NOW - DAY);
    session.run("ses_live", NOW + DAY);

    // Usage rollups: one row a day from 396 to 405 days ago; the 5 older than 400 days go.
    const usage = db.sqlite.prepare(
      "INSERT INTO usage_minutes (minute, orgId, company, tokenId, loopId, requests) VALUES (?1, 'org_a', 'acme', '', '', 1)",
    );
    for (let day = 396; day <= 405; day++) usage.run(Math.floor((NOW - day * DAY) / 60_000));

    const retention = createRetention({
      sqlite: db.sqlite,
      auditDays: 90,
      runDays: 30,
      usageDays: 400,
      batch: 4,
      now: () => NOW,
    });
    // Small batches: the 10 audit rows past 90 days take three of them.
    expect(await retention.sweep()).toEqual({ auditRows: 10, runs: 2, usageRows: 5, sessions: 1 });

    const ids = (sql: string) =>
      db.sqlite
        .query<{ id: string }, []>(sql)
        .all()
        .map((row) => row.id);
    expect(db.sqlite.query("SELECT COUNT(*) AS n FROM plan_audit").get()).toEqual({ n: 85 });
    expect(
      db.sqlite.query<{ oldest: number }, []>("SELECT MIN(createdAt) AS oldest FROM plan_audit").get()?.oldest,
    ).toBeGreaterThanOrEqual(NOW - 90 * DAY);
    expect(ids("SELECT id FROM runs ORDER BY id")).toEqual(["run_live", "run_recent"]);
    expect(ids("SELECT runId AS id FROM run_steps ORDER BY runId")).toEqual(["run_live", "run_recent"]);
    expect(ids("SELECT runId AS id FROM run_step_attempts ORDER BY runId")).toEqual(["run_live", "run_recent"]);
    expect(ids("SELECT id FROM sessions")).toEqual(["ses_live"]);
    expect(
      db.sqlite.query<{ oldest: number }, []>("SELECT MIN(minute) AS oldest FROM usage_minutes").get()?.oldest,
    ).toBeGreaterThanOrEqual(Math.floor((NOW - 400 * DAY) / 60_000));

    // Nothing more to do: a second sweep deletes nothing.
    expect(await retention.sweep()).toEqual({ auditRows: 0, runs: 0, usageRows: 0, sessions: 0 });
    await retention.stop();
  } finally {
    db.close();
  }
});
