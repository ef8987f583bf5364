/**
 * Raw bun:sqlite statements against drizzle's prepared queries, for the statements the hot paths
 * run: the step upsert the engine commits after every step, reading a run by id, a page of the
 * runs list, and the claim of a queued run. Both sides are prepared once, run on the same file,
 * interleaved over rounds; the median of each is printed with drizzle's cost relative to raw.
 *
 *   bun bench/sql.ts [--n 20000] [--rounds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { and, desc, eq, sql } from "drizzle-orm";
import { runs, runSteps } from "../schema/tables.ts";
import { openDatabase } from "../server/db.ts";

const { values } = parseArgs({
  options: { n: { type: "string", default: "20000" }, rounds: { type: "string", default: "5" } },
});
const n = Number(values.n);
const rounds = Number(values.rounds);
const dir = mkdtempSync(join(tmpdir(), "health-bench-sql-"));
const db = openDatabase(join(dir, "health.db"));

// A table with some history: 5,000 finished runs of two orgs, and one running run to write to.
const insert = db.sqlite.prepare(
  "INSERT INTO runs (id, workflowInstanceId, orgId, loopId, input, triggerKind, triggerId, triggerName, status, attempts, createdAt, updatedAt) " +
    "VALUES (?1, ?2, ?3, 'loop_x', '{}', 'token', 't', 't', ?4, 1, ?5, ?5)",
);
db.sqlite.transaction(() => {
  for (let i = 0; i < 5_000; i++)
    insert.run(`run_${i}`, `wfi_${i}`, i % 2 ? "org_a" : "org_b", "complete", 1_800_000_000_000 + i);
  insert.run("run_live", "wfi_live", "org_a", "running", 1_800_000_100_000);
})();

const rawUpsert = db.sqlite.prepare(
  "INSERT INTO run_steps (runId, key, name, idx, kind, status, result, error, attempts, wakeAt, startedAt, finishedAt) " +
    "VALUES ($runId, $key, $name, $idx, 'do', 'complete', $result, NULL, 1, NULL, $now, $now) " +
    "ON CONFLICT (runId, key) DO UPDATE SET status = excluded.status, result = excluded.result, finishedAt = excluded.finishedAt",
);
const ormUpsert = db.orm
  .insert(runSteps)
  .values({
    runId: sql.placeholder("runId"),
    key: sql.placeholder("key"),
    name: sql.placeholder("name"),
    idx: sql.placeholder("idx"),
    kind: "do",
    status: "complete",
    result: sql.placeholder("result"),
    attempts: 1,
    startedAt: sql.placeholder("now"),
    finishedAt: sql.placeholder("now"),
  })
  .onConflictDoUpdate({
    target: [runSteps.runId, runSteps.key],
    set: { status: sql`excluded.status`, result: sql`excluded.result`, finishedAt: sql`excluded.finishedAt` },
  })
  .prepare();

const rawGet = db.sqlite.prepare("SELECT * FROM runs WHERE id = ?1 AND orgId = ?2");
const ormGet = db.orm
  .select()
  .from(runs)
  .where(and(eq(runs.id, sql.placeholder("id")), eq(runs.orgId, sql.placeholder("orgId"))))
  .prepare();

const rawPage = db.sqlite.prepare(
  "SELECT * FROM runs WHERE orgId = ?1 AND loopId = ?2 ORDER BY createdAt DESC, rowid DESC LIMIT 21",
);
const ormPage = db.orm
  .select()
  .from(runs)
  .where(and(eq(runs.orgId, sql.placeholder("orgId")), eq(runs.loopId, sql.placeholder("loopId"))))
  .orderBy(desc(runs.createdAt), desc(sql`rowid`))
  .limit(21)
  .prepare();

const cases: Array<{ name: string; raw: (i: number) => unknown; orm: (i: number) => unknown }> = [
  {
    name: "step upsert (after every step)",
    raw: (i) => rawUpsert.run({ runId: "run_live", key: `s${i % 50}`, name: "s", idx: i % 50, result: "1", now: i }),
    orm: (i) => ormUpsert.run({ runId: "run_live", key: `s${i % 50}`, name: "s", idx: i % 50, result: "1", now: i }),
  },
  {
    name: "run by id (API, console)",
    raw: (i) => rawGet.get(`run_${i % 5_000}`, "org_a"),
    orm: (i) => ormGet.get({ id: `run_${i % 5_000}`, orgId: "org_a" }),
  },
  {
    name: "runs page of 20 (console, CLI)",
    raw: () => rawPage.all("org_a", "loop_x"),
    orm: () => ormPage.all({ orgId: "org_a", loopId: "loop_x" }),
  },
];

function time(work: (i: number) => unknown): number {
  const started = performance.now();
  for (let i = 0; i < n; i++) work(i);
  return ((performance.now() - started) / n) * 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

try {
  console.log(`bun ${Bun.version}: ${n} executions per round, ${rounds} interleaved rounds, medians`);
  console.log("| statement | raw µs | drizzle µs | drizzle / raw |\n|---|---|---|---|");
  for (const c of cases) {
    time(c.raw);
    time(c.orm);
    const raw: number[] = [];
    const orm: number[] = [];
    for (let r = 0; r < rounds; r++) {
      raw.push(time(c.raw));
      orm.push(time(c.orm));
    }
    const [a, b] = [median(raw), median(orm)];
    console.log(`| ${c.name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b / a).toFixed(2)}× |`);
  }
} finally {
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
