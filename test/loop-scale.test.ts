/**
 * The engine at scale, on real SQLite files: many runs per thread, limits and fairness between
 * organizations, and a thread blocked by one loop replaced without losing the others. Every wait
 * polls a condition; nothing here measures time (bench/engine.ts does).
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { logLines, ORG, TRIGGER, type TestEngine, testEngine, waitFor, waitForStatus } from "./support/loops.ts";

function runningBy(db: { sqlite: import("bun:sqlite").Database }, column: "orgId" | "loopId") {
  return db.sqlite.query<{ key: string; n: number }, []>(
    `SELECT ${column} AS key, COUNT(*) AS n FROM runs WHERE status = 'running' GROUP BY ${column}`,
  );
}

describe("many runs per thread", () => {
  test("one thread holds hundreds of runs waiting on I/O at once, and finishes them all", async () => {
    await using t = await testEngine({ threads: 1, concurrency: 500 });
    await t.engine.start();
    const runIds = await Promise.all(
      Array.from(
        { length: 300 },
        async () =>
          (await t.engine.enqueue({ orgId: ORG, loopId: "loop_slow", input: { ms: 400 }, trigger: TRIGGER })).runId,
      ),
    );
    let most = 0;
    await waitFor(
      () => {
        most = Math.max(most, t.engine.activeCount);
        return t.db.sqlite.query("SELECT 1 FROM runs WHERE status != 'complete' LIMIT 1").get() === null
          ? true
          : undefined;
      },
      "every run to complete",
      30_000,
    );
    expect(most).toBeGreaterThanOrEqual(250);
    expect(t.engine.threadCount).toBe(1);
    expect((await waitForStatus(t.engine, runIds[0] ?? "")).output).toBe("done");
  }, 40_000);
});

describe("limits and fairness", () => {
  test("one organization's burst does not starve another's single run", async () => {
    await using t = await testEngine({ threads: 1, concurrency: 20 });
    await t.engine.start();
    for (let i = 0; i < 2_000; i++) {
      await t.engine.enqueue({ orgId: "org_burst", loopId: "loop_slow", input: { ms: 50 }, trigger: TRIGGER });
    }
    const single = await t.engine.enqueue({ orgId: ORG, loopId: "loop_slow", input: { ms: 50 }, trigger: TRIGGER });
    await waitForStatus(t.engine, single.runId, ["complete"], 10_000);
    const burstDone = t.db.sqlite
      .query<{ n: number }, []>("SELECT COUNT(*) AS n FROM runs WHERE orgId = 'org_burst' AND status = 'complete'")
      .get()?.n;
    // Served in turn with the burst, not after it: most of the burst is still waiting.
    expect(burstDone).toBeLessThan(200);
  }, 30_000);

  test("an organization never runs more than its limit; triggers over it wait as queued", async () => {
    await using t = await testEngine({ orgConcurrency: 3, concurrency: 50 });
    await t.engine.start();
    const pending = [
      ...Array.from({ length: 12 }, () => ({ orgId: "org_a", loopId: "loop_slow" })),
      ...Array.from({ length: 4 }, () => ({ orgId: "org_b", loopId: "loop_slow" })),
    ];
    const ids: string[] = [];
    for (const run of pending)
      ids.push((await t.engine.enqueue({ ...run, input: { ms: 80 }, trigger: TRIGGER })).runId);
    const counts = runningBy(t.db, "orgId");
    const most = new Map<string, number>();
    let queuedSeen = false;
    await waitFor(
      () => {
        for (const { key, n } of counts.all()) most.set(key, Math.max(most.get(key) ?? 0, n));
        queuedSeen ||= t.db.sqlite.query("SELECT 1 FROM runs WHERE status = 'queued' LIMIT 1").get() !== null;
        return t.db.sqlite.query("SELECT 1 FROM runs WHERE status != 'complete' LIMIT 1").get() === null
          ? true
          : undefined;
      },
      "every run to complete",
      15_000,
    );
    expect(ids).toHaveLength(16);
    expect(queuedSeen).toBe(true);
    expect(most.get("org_a")).toBe(3);
    expect(most.get("org_b")).toBeLessThanOrEqual(3);
    expect(most.get("org_b")).toBeGreaterThanOrEqual(1);
  }, 20_000);

  test("a loop's static concurrency caps its runs while other loops go on", async () => {
    await using t = await testEngine({ concurrency: 50 });
    await t.engine.start();
    for (let i = 0; i < 8; i++)
      await t.engine.enqueue({ orgId: ORG, loopId: "loop_limited", input: { ms: 80 }, trigger: TRIGGER });
    for (let i = 0; i < 8; i++)
      await t.engine.enqueue({ orgId: ORG, loopId: "loop_slow", input: { ms: 80 }, trigger: TRIGGER });
    const counts = runningBy(t.db, "loopId");
    const most = new Map<string, number>();
    await waitFor(
      () => {
        for (const { key, n } of counts.all()) most.set(key, Math.max(most.get(key) ?? 0, n));
        return t.db.sqlite.query("SELECT 1 FROM runs WHERE status != 'complete' LIMIT 1").get() === null
          ? true
          : undefined;
      },
      "every run to complete",
      15_000,
    );
    expect(most.get("loop_limited")).toBe(2);
    expect(most.get("loop_slow")).toBeGreaterThan(2);
  }, 20_000);
});

/**
 * `count` runs of loop_waits started on `t`, which log each step and wait between them; resolves
 * once each has run a step, so that a culprit enqueued next shares their thread.
 */
async function innocents(t: TestEngine, tag: string, count: number, steps: number, waitMs: number) {
  const logFile = join(t.dir, `${tag}.log`);
  const runIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_waits",
      input: { logFile, tag: `${tag}${i}`, steps, waitMs },
      trigger: TRIGGER,
    });
    runIds.push(runId);
  }
  await waitFor(() => (logLines(logFile).length >= count ? true : undefined), "the first steps");
  return {
    logFile,
    async allComplete(): Promise<void> {
      for (const runId of runIds) {
        const run = await waitForStatus(t.engine, runId, ["complete", "errored"], 20_000);
        expect({ runId, status: run.status }).toEqual({ runId, status: "complete" });
      }
    },
  };
}

async function culprit(t: TestEngine, mode: string) {
  const { runId } = await t.engine.enqueue({ orgId: ORG, loopId: "loop_hang", input: { mode }, trigger: TRIGGER });
  return waitForStatus(t.engine, runId, ["errored"], 20_000);
}

describe("a loop that blocks its thread", () => {
  test("is found and errored; the runs that shared its thread resume elsewhere and complete", async () => {
    await using t = await testEngine({ threads: 1, blockedMs: 400, memoryCheckMs: 100 });
    await t.engine.start();
    const others = await innocents(t, "r", 6, 6, 150);
    const spinner = await culprit(t, "spin");
    expect(spinner.error?.name).toBe("LoopBlockedError");
    expect(spinner.error?.message).toMatch(
      /^the loop kept its thread busy for \d+ ms without yielding \(synchronous code that never ends\?\); the thread was replaced$/,
    );
    await others.allComplete();
    // Replayed, not restarted: a step ran again only if the thread went down before it was stored.
    const lines = logLines(others.logFile);
    for (let i = 0; i < 6; i++) {
      for (let step = 0; step < 6; step++) {
        const times = lines.filter((line) => line.startsWith(`r${i} step-${step} `)).length;
        expect({ run: i, step, ranOnceOrTwice: times === 1 || times === 2 }).toEqual({
          run: i,
          step,
          ranOnceOrTwice: true,
        });
      }
    }
    // Dedicated threads close once their runs leave: a new run finds the pool at its one shared thread.
    const after = await t.engine.enqueue({ orgId: ORG, loopId: "loop_echo", input: 1, trigger: TRIGGER });
    expect((await waitForStatus(t.engine, after.runId)).status).toBe("complete");
    await waitFor(() => (t.engine.threadCount === 1 ? true : undefined), "the dedicated threads to close");
  }, 30_000);
});

describe("a loop that exhausts its thread's heap", () => {
  test("is found and errored; the runs that shared its thread complete", async () => {
    await using t = await testEngine({ threads: 1, memoryLimitMb: 192, memoryCheckMs: 100 });
    await t.engine.start();
    const others = await innocents(t, "m", 4, 5, 100);
    const hog = await culprit(t, "hog-async");
    expect(hog.error?.name).toBe("MemoryLimitExceeded");
    expect(hog.error?.message).toMatch(/over its thread's limit of 192 MB; the thread was replaced$/);
    await others.allComplete();
  }, 30_000);
});

describe("a thread killed mid-step", () => {
  test("ends the run that killed it; the runs that shared it resume by replay and complete", async () => {
    await using t = await testEngine({ threads: 1 });
    await t.engine.start();
    const others = await innocents(t, "k", 4, 5, 100);
    const killer = await culprit(t, "exit-in-step");
    expect(killer.error?.name).toBe("LoopCrashed");
    expect(killer.error?.message).toStartWith("the loop's thread ended: ");
    expect(killer.steps.map((s) => `${s.key}:${s.status}`)).toEqual(["before:complete", "exit:errored"]);
    await others.allComplete();
  }, 30_000);
});
