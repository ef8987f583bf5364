/**
 * Kill -9 in the middle of runs, restart, and check the durability promise precisely: every
 * accepted run completes, and no step whose completion was persisted runs a second time. A step
 * interrupted mid-flight (its function ran but its result was not yet committed) may run again.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../server/db.ts";
import { lineCounts, waitFor } from "./support/loops.ts";
import { tempDir } from "./support/temp-dir.ts";

const SCRIPT = join(import.meta.dir, "fixtures", "engine-process.ts");
const RUNS = 6;
const STEPS = 30;

function spawnEngine(dbPath: string, logFile: string, runs: number) {
  return Bun.spawn([process.execPath, SCRIPT, dbPath, logFile, String(runs), String(STEPS)], {
    cwd: join(import.meta.dir, ".."),
    stdout: "inherit",
    stderr: "inherit",
  });
}

async function exitWithin(child: ReturnType<typeof spawnEngine>, ms: number): Promise<number> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`engine process did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([child.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

test("after kill -9 and a restart, every run completes and no persisted step runs twice", async () => {
  using dir = tempDir("health-loop-");
  const dbPath = join(dir, "crash.db");
  const logFile = join(dir, "steps.log");

  const first = spawnEngine(dbPath, logFile, RUNS);
  try {
    await waitFor(
      () => ([...lineCounts(logFile).values()].length >= 25 ? true : undefined),
      "25 steps before the kill",
      10_000,
    );
  } finally {
    first.kill(9);
  }
  await first.exited;

  const db = openDatabase(dbPath);
  const persisted = db.sqlite
    .query<{ tag: string; key: string }, []>(
      "SELECT json_extract(r.input, '$.tag') AS tag, s.key AS key FROM run_steps s JOIN runs r ON r.id = s.runId WHERE s.status = 'complete'",
    )
    .all()
    .map(({ tag, key }) => `${tag} ${key}`);
  const atKill = db.sqlite
    .query<{ status: string }, []>("SELECT status FROM runs")
    .all()
    .map((r) => r.status);
  db.close();
  // The kill must land mid-way for the test to mean anything.
  expect(atKill.length).toBe(RUNS);
  expect(atKill.filter((status) => status === "complete").length).toBeLessThan(RUNS);
  expect(persisted.length).toBeGreaterThan(0);

  const second = spawnEngine(dbPath, logFile, 0);
  expect(await exitWithin(second, 15_000)).toBe(0);

  const check = openDatabase(dbPath);
  const runs = check.sqlite
    .query<{ status: string; output: string | null; attempts: number }, []>("SELECT status, output, attempts FROM runs")
    .all();
  check.close();
  const expectedTotal = (STEPS * (STEPS - 1)) / 2;
  expect(runs.map((r) => [r.status, r.output === null ? null : JSON.parse(r.output).total])).toEqual(
    Array.from({ length: RUNS }, () => ["complete", expectedTotal]),
  );
  expect(runs.some((r) => r.attempts >= 2)).toBe(true);

  const counts = lineCounts(logFile);
  const persistedRanTwice = persisted.filter((step) => counts.get(step) !== 1);
  expect(persistedRanTwice).toEqual([]);
  const everyStep = Array.from({ length: RUNS }, (_, r) =>
    Array.from({ length: STEPS }, (_, s) => `run${r} step-${s}`),
  ).flat();
  expect(everyStep.filter((step) => (counts.get(step) ?? 0) < 1)).toEqual([]);
  // Only steps in flight at the kill (at most one per executing run) may have run twice.
  const reran = everyStep.filter((step) => (counts.get(step) ?? 0) > 1);
  expect(reran.length).toBeLessThanOrEqual(4);
  expect(reran.every((step) => (counts.get(step) ?? 0) === 2)).toBe(true);
});
