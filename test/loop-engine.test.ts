/**
 * The engine end to end on real SQLite files: loops run in workers, steps persist, and runs
 * survive stops and restarts. Every wait polls a condition with a deadline.
 */
import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { join } from "node:path";
import { createEngine } from "../core/loop/engine.ts";
import { openDatabase } from "../server/db.ts";
import { loadFixtureLoops, logLines, ORG, TRIGGER, testEngine, waitFor, waitForStatus } from "./support/loops.ts";

const anyTime = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

describe("running loops", () => {
  test("enqueue commits a queued run and answers ids of the right shape", async () => {
    await using t = await testEngine();
    const ids = await t.engine.enqueue({ orgId: ORG, loopId: "loop_echo", input: { a: 1 }, trigger: TRIGGER });
    expect(ids.runId).toMatch(/^run_[A-Za-z0-9]{24}$/);
    expect(ids.workflowInstanceId).toMatch(/^wfi_[A-Za-z0-9]{24}$/);
    // Read through a second connection: the row is durable before enqueue returned.
    const other = openDatabase(join(t.dir, "health.db"));
    const row = other.sqlite.query("SELECT status, input FROM runs WHERE id = ?1").get(ids.runId);
    other.close();
    expect(row).toEqual({ status: "queued", input: '{"a":1}' });
  });

  test("a run records its input, steps, output and trigger; undefined and null bodies stay apart", async () => {
    await using t = await testEngine();
    await t.engine.start();
    const none = await t.engine.enqueue({ orgId: ORG, loopId: "loop_echo", input: undefined, trigger: TRIGGER });
    const nul = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_echo",
      input: null,
      trigger: { kind: "user", id: "usr_1", name: "Ada" },
    });
    const noneRun = await waitForStatus(t.engine, none.runId);
    const nullRun = await waitForStatus(t.engine, nul.runId);
    const step = (name: string, key: string, index: number, result: unknown) => ({
      name,
      key,
      index,
      kind: "do" as const,
      status: "complete" as const,
      attempts: 1,
      attemptLog: [{ attempt: 1, status: "complete" as const, error: null, startedAt: anyTime, finishedAt: anyTime }],
      result,
      error: null,
      startedAt: anyTime,
      finishedAt: anyTime,
      wakeAt: null,
    });
    expect(noneRun).toEqual({
      id: none.runId,
      workflowInstanceId: none.workflowInstanceId,
      loopId: "loop_echo",
      orgId: ORG,
      status: "complete",
      input: undefined,
      output: { seen: { isUndefined: true }, counts: [1, 2], nothing: "undefined" },
      error: null,
      trigger: TRIGGER,
      attempts: 1,
      createdAt: anyTime,
      updatedAt: anyTime,
      startedAt: anyTime,
      finishedAt: anyTime,
      wakeAt: null,
      steps: [
        step("look", "look", 0, { isUndefined: true }),
        step("count", "count", 1, 1),
        step("count", "count#2", 2, 2),
        step("nothing", "nothing", 3, undefined),
      ],
    });
    expect({ input: nullRun.input, output: nullRun.output, trigger: nullRun.trigger }).toEqual({
      input: null,
      output: { seen: { isUndefined: false, body: null }, counts: [1, 2], nothing: "undefined" },
      trigger: { kind: "user", id: "usr_1", name: "Ada" },
    });
    expect(await t.engine.get("org_other", none.runId)).toBeNull();
  });

  test("a loop that throws fails its run, never the process", async () => {
    await using t = await testEngine();
    await t.engine.start();
    const inStep = await t.engine.enqueue({ orgId: ORG, loopId: "loop_throws", input: undefined, trigger: TRIGGER });
    const inRun = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_throws",
      input: { where: "run" },
      trigger: TRIGGER,
    });
    const inTimer = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_throws",
      input: { where: "timer" },
      trigger: TRIGGER,
    });
    const bigint = await t.engine.enqueue({ orgId: ORG, loopId: "loop_bigint", input: undefined, trigger: TRIGGER });
    const errors = await Promise.all(
      [inStep, inRun, inTimer, bigint].map(async ({ runId }) => {
        const run = await waitForStatus(t.engine, runId);
        return { status: run.status, error: run.error, steps: run.steps.map((s) => `${s.key}:${s.status}`) };
      }),
    );
    expect(errors).toEqual([
      {
        status: "errored",
        error: { name: "Error", message: "the step exploded" },
        steps: ["fine:complete", "explode:errored"],
      },
      { status: "errored", error: { name: "TypeError", message: "broken outside a step" }, steps: ["fine:complete"] },
      {
        status: "errored",
        error: { name: "Error", message: "uncaught outside a step: thrown from a timer" },
        steps: ["fine:complete"],
      },
      {
        status: "errored",
        error: {
          name: "StepResultError",
          message:
            'the result of step "big" is not JSON-serializable: $ is a BigInt; convert it to a string or a number',
        },
        steps: ["big:errored"],
      },
    ]);
  });

  test("a run of a loop that is not registered errors with a clear reason", async () => {
    await using t = await testEngine();
    await t.engine.start();
    const { runId } = await t.engine.enqueue({ orgId: ORG, loopId: "loop_gone", input: undefined, trigger: TRIGGER });
    const run = await waitForStatus(t.engine, runId);
    expect({ status: run.status, error: run.error }).toEqual({
      status: "errored",
      error: {
        name: "LoopNotFound",
        message: "loop loop_gone is not registered (its module was removed, renamed or failed to load)",
      },
    });
  });

  test("at most `concurrency` runs execute at once", async () => {
    await using t = await testEngine({ concurrency: 2 });
    await t.engine.start();
    const runIds = await Promise.all(
      Array.from(
        { length: 6 },
        async () =>
          (await t.engine.enqueue({ orgId: ORG, loopId: "loop_slow", input: { ms: 120 }, trigger: TRIGGER })).runId,
      ),
    );
    let maxRunning = 0;
    const count = t.db.sqlite.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM runs WHERE status = 'running'");
    await waitFor(async () => {
      maxRunning = Math.max(maxRunning, t.engine.activeCount, count.get()?.n ?? 0);
      const runs = await Promise.all(runIds.map((id) => t.engine.get(ORG, id)));
      return runs.every((run) => run?.status === "complete") ? true : undefined;
    }, "all slow runs to complete");
    expect(maxRunning).toBe(2);
  });
});

describe("isolation", () => {
  test("a loop awaiting forever or spinning synchronously is stopped at the run timeout", async () => {
    await using t = await testEngine({ runTimeoutMs: 300 });
    await t.engine.start();
    const waiting = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_hang",
      input: { mode: "await" },
      trigger: TRIGGER,
    });
    const spinning = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_hang",
      input: { mode: "spin" },
      trigger: TRIGGER,
    });
    for (const { runId } of [waiting, spinning]) {
      const run = await waitForStatus(t.engine, runId);
      expect({ status: run.status, error: run.error, steps: run.steps.map((s) => s.status) }).toEqual({
        status: "errored",
        error: {
          name: "RunTimeoutError",
          message: "the run executed for longer than its limit of 300 ms; it was stopped",
        },
        steps: ["complete"],
      });
    }
    // The engine, and the thread it runs on, are still fine.
    const after = await t.engine.enqueue({ orgId: ORG, loopId: "loop_echo", input: 1, trigger: TRIGGER });
    expect((await waitForStatus(t.engine, after.runId)).status).toBe("complete");
  });

  test("a step spinning synchronously past its timeout is stopped by the engine", async () => {
    await using t = await testEngine();
    await t.engine.start();
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_hang",
      input: { mode: "spin-in-step" },
      trigger: TRIGGER,
    });
    const run = await waitForStatus(t.engine, runId);
    expect({
      status: run.status,
      error: run.error,
      steps: run.steps.map((s) => `${s.key}:${s.status}:${s.error?.name}`),
    }).toEqual({
      status: "errored",
      error: {
        name: "StepTimeoutError",
        message:
          'step "spin" did not finish within its timeout of 100 ms and blocked its thread; the thread was replaced',
      },
      steps: ["before:complete:undefined", "spin:errored:RunEnded"],
    });
  });

  test("a loop allocating without bound is stopped at its heap limit", async () => {
    await using t = await testEngine({ memoryLimitMb: 96, memoryCheckMs: 100 });
    await t.engine.start();
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_hang",
      input: { mode: "hog-async" },
      trigger: TRIGGER,
    });
    const run = await waitForStatus(t.engine, runId, ["errored"], 10_000);
    expect(run.error?.name).toBe("MemoryLimitExceeded");
    expect(run.error?.message).toMatch(
      /^the loop used \d+ MB of heap, over its thread's limit of 96 MB; the thread was replaced$/,
    );
  });

  test("a loop allocating in a synchronous loop is stopped when the process grows past its limit", async () => {
    const rssMb = Math.round(process.memoryUsage().rss / 1024 / 1024);
    await using t = await testEngine({ processMemoryLimitMb: rssMb + 400, memoryCheckMs: 100 });
    await t.engine.start();
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_hang",
      input: { mode: "hog-sync" },
      trigger: TRIGGER,
    });
    const run = await waitForStatus(t.engine, runId, ["errored"], 10_000);
    expect(run.error?.name).toBe("MemoryLimitExceeded");
    expect(run.error?.message).toMatch(
      /^the process reached \d+ MB \(limit \d+ MB\) while this loop was running; its thread was replaced$/,
    );
  });

  test("loop workers do not see the gateway's HEALTH_* variables", async () => {
    process.env.HEALTH_TEST_SECRET = "not for loops";
    try {
      await using t = await testEngine();
      await t.engine.start();
      const { runId } = await t.engine.enqueue({ orgId: ORG, loopId: "loop_env", input: undefined, trigger: TRIGGER });
      expect((await waitForStatus(t.engine, runId)).output).toEqual({ secret: null, hasPath: true });
    } finally {
      delete process.env.HEALTH_TEST_SECRET;
    }
  });
});

describe("durability", () => {
  test("a sleep releases the run and survives an engine stop and a new engine on the same file", async () => {
    await using t = await testEngine();
    const logFile = join(t.dir, "sleeper.log");
    await t.engine.start();
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_sleeper",
      input: { logFile, sleepMs: 400 },
      trigger: TRIGGER,
    });
    const sleeping = await waitForStatus(t.engine, runId, ["sleeping"]);
    expect({
      active: t.engine.activeCount,
      wakeAt: typeof sleeping.wakeAt,
      nap: sleeping.steps.find((s) => s.key === "nap")?.status,
    }).toEqual({
      active: 0,
      wakeAt: "string",
      nap: "sleeping",
    });
    await t.engine.stop();

    const db = openDatabase(join(t.dir, "health.db"));
    const engine = createEngine({ sqlite: db.sqlite, loops: await loadFixtureLoops(), pollMs: 50 });
    try {
      await engine.start();
      const run = await waitForStatus(engine, runId);
      expect({
        status: run.status,
        attempts: run.attempts,
        steps: run.steps.map((s) => `${s.key}:${s.kind}:${s.status}`),
        log: logLines(logFile),
      }).toEqual({
        status: "complete",
        attempts: 2,
        steps: ["before:do:complete", "nap:sleep:complete", "instant:sleep:complete", "after:do:complete"],
        log: ["before", "after"],
      });
      expect((run.output as { sleptMs: number }).sleptMs).toBeGreaterThanOrEqual(400);
    } finally {
      await engine.stop();
      db.close();
    }
  });

  test("sleepUntil wakes at the given time", async () => {
    await using t = await testEngine({ pollMs: 10_000 });
    const logFile = join(t.dir, "until.log");
    await t.engine.start();
    const until = Date.now() + 300;
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_sleeper",
      input: { logFile, until },
      trigger: TRIGGER,
    });
    // pollMs is 10 s: only the engine's own wake timer can finish this in time.
    const run = await waitForStatus(t.engine, runId, ["complete"], 3_000);
    expect(Date.parse(run.finishedAt ?? "")).toBeGreaterThanOrEqual(until);
    expect(run.steps.find((s) => s.key === "nap")?.wakeAt).toBe(new Date(until).toISOString());
  });

  test("stop lets in-flight steps finish, requeues the run, and a restart replays without re-running steps", async () => {
    await using t = await testEngine();
    const logFile = join(t.dir, "logger.log");
    await t.engine.start();
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_logger",
      input: { logFile, tag: "r1", steps: 25, stepDelayMs: 15 },
      trigger: TRIGGER,
    });
    await waitFor(() => (logLines(logFile).length >= 5 ? true : undefined), "five steps to run");
    await t.engine.stop();
    const stopped = await t.engine.get(ORG, runId);
    expect({ status: stopped?.status, open: stopped?.steps.filter((s) => s.status !== "complete").length }).toEqual({
      status: "queued",
      open: 0,
    });

    await t.engine.start();
    const run = await waitForStatus(t.engine, runId);
    const lines = logLines(logFile);
    expect({ status: run.status, output: run.output, lines: lines.length, distinct: new Set(lines).size }).toEqual({
      status: "complete",
      output: { tag: "r1", total: 300 },
      lines: 25,
      distinct: 25,
    });
  });

  test("stop gives up on a step still running at its deadline; the run is requeued and the step will run again", async () => {
    await using t = await testEngine({ stopTimeoutMs: 150 });
    await t.engine.start();
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_slow",
      input: { ms: 60_000 },
      trigger: TRIGGER,
    });
    await waitFor(
      async () => ((await t.engine.get(ORG, runId))?.steps.length === 1 ? true : undefined),
      "the slow step to start",
    );
    const started = Date.now();
    await t.engine.stop();
    expect(Date.now() - started).toBeLessThan(2_000);
    const run = await t.engine.get(ORG, runId);
    expect({
      status: run?.status,
      steps: run?.steps.map((s) => `${s.key}:${s.status}`),
      active: t.engine.activeCount,
    }).toEqual({
      status: "queued",
      steps: ["wait:running"],
      active: 0,
    });
  });

  test("leases: an expired one is taken over, a live engine's is respected, a dead engine's is taken at start", async () => {
    await using t = await testEngine();
    const enqueue = async (input: string) =>
      (await t.engine.enqueue({ orgId: ORG, loopId: "loop_echo", input, trigger: TRIGGER })).runId;
    const [stale, live, dead, unknown] = [
      await enqueue("stale"),
      await enqueue("live"),
      await enqueue("dead"),
      await enqueue("unknown"),
    ];
    const claim = t.db.sqlite.query(
      "UPDATE runs SET status = 'running', leaseOwner = ?2, leaseExpiresAt = ?3 WHERE id = ?1",
    );
    const later = Date.now() + 60_000;
    claim.run(stale, "eng_stale", Date.now() - 1);
    claim.run(live, "eng_live", later);
    claim.run(dead, "eng_dead", later);
    claim.run(unknown, "eng_unknown", later);
    // eng_live is this test's parent process, alive; eng_dead was a process that has exited.
    const exited = Bun.spawn(["true"]);
    await exited.exited;
    const engine = t.db.sqlite.query(
      "INSERT INTO loop_engines (owner, host, pid, startedAt, seenAt) VALUES (?1, ?2, ?3, ?4, ?4)",
    );
    engine.run("eng_live", hostname(), process.ppid, Date.now());
    engine.run("eng_dead", hostname(), exited.pid, Date.now());
    await t.engine.start();
    for (const runId of [stale, dead, unknown]) expect((await waitForStatus(t.engine, runId)).status).toBe("complete");
    expect((await t.engine.get(ORG, live))?.status).toBe("running");
    await t.engine.stop();
    // Once eng_live stops heartbeating, a new engine takes its runs after the lease.
    t.db.sqlite.run("UPDATE loop_engines SET seenAt = 0 WHERE owner = 'eng_live'");
    const next = createEngine({ sqlite: t.db.sqlite, loops: await loadFixtureLoops(), pollMs: 50 });
    await next.start();
    try {
      expect((await waitForStatus(next, live)).status).toBe("complete");
    } finally {
      await next.stop();
    }
  });
});

describe("retries", () => {
  test("every attempt of a retried step is kept with its error", async () => {
    await using t = await testEngine();
    await t.engine.start();
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_flaky",
      input: { failures: 2 },
      trigger: TRIGGER,
    });
    const run = await waitForStatus(t.engine, runId);
    const [call] = run.steps;
    expect({ status: run.status, output: run.output, attempts: call?.attempts, error: call?.error }).toEqual({
      status: "complete",
      output: { tries: 3 },
      attempts: 3,
      // The step succeeded in the end; the failures live on in its attempt log.
      error: null,
    });
    expect(call?.attemptLog.map(({ attempt, status, error }) => ({ attempt, status, error }))).toEqual([
      { attempt: 1, status: "errored", error: { name: "Error", message: "the gateway answered 503 (try 1)" } },
      { attempt: 2, status: "errored", error: { name: "Error", message: "the gateway answered 503 (try 2)" } },
      { attempt: 3, status: "complete", error: null },
    ]);
    for (const attempt of call?.attemptLog ?? []) {
      expect(Date.parse(attempt.finishedAt ?? "")).toBeGreaterThanOrEqual(Date.parse(attempt.startedAt));
    }
  });

  test("a step that spends its retries keeps every failure", async () => {
    await using t = await testEngine();
    await t.engine.start();
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_flaky",
      input: { failures: 9 },
      trigger: TRIGGER,
    });
    const run = await waitForStatus(t.engine, runId);
    expect(run.status).toBe("errored");
    expect(run.steps[0]?.attemptLog.map((a) => `${a.attempt}:${a.status}:${a.error?.message}`)).toEqual([
      "1:errored:the gateway answered 503 (try 1)",
      "2:errored:the gateway answered 503 (try 2)",
      "3:errored:the gateway answered 503 (try 3)",
      "4:errored:the gateway answered 503 (try 4)",
    ]);
  });
});

describe("terminate", () => {
  test("queued, running and sleeping runs are terminated; finished and unknown ones are told apart", async () => {
    await using t = await testEngine();
    const queued = await t.engine.enqueue({ orgId: ORG, loopId: "loop_slow", input: { ms: 10 }, trigger: TRIGGER });
    expect(await t.engine.terminate(ORG, queued.runId)).toEqual({ ok: true, value: { status: "terminated" } });

    await t.engine.start();
    const running = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_slow",
      input: { ms: 60_000 },
      trigger: TRIGGER,
    });
    await waitFor(
      async () => ((await t.engine.get(ORG, running.runId))?.steps.length === 1 ? true : undefined),
      "the slow step to start",
    );
    expect(await t.engine.terminate(ORG, running.runId)).toEqual({ ok: true, value: { status: "terminated" } });
    expect(t.engine.activeCount).toBe(0);

    const sleeping = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_sleeper",
      input: { logFile: join(t.dir, "s.log"), sleepMs: 60_000 },
      trigger: TRIGGER,
    });
    await waitForStatus(t.engine, sleeping.runId, ["sleeping"]);
    expect((await t.engine.terminate(ORG, sleeping.runId)).ok).toBe(true);

    const finished = await t.engine.enqueue({ orgId: ORG, loopId: "loop_echo", input: 1, trigger: TRIGGER });
    await waitForStatus(t.engine, finished.runId);
    expect(await t.engine.terminate(ORG, finished.runId)).toEqual({
      ok: false,
      error: {
        code: "already_finished",
        message: `run ${finished.runId} already finished (complete)`,
        status: "complete",
      },
    });
    expect(await t.engine.terminate(ORG, queued.runId)).toMatchObject({
      ok: false,
      error: { code: "already_finished", status: "terminated" },
    });
    expect(await t.engine.terminate("org_other", finished.runId)).toEqual({
      ok: false,
      error: { code: "not_found", message: `no run ${finished.runId} in this organization` },
    });

    const runningRecord = await t.engine.get(ORG, running.runId);
    expect({
      status: runningRecord?.status,
      error: runningRecord?.error,
      steps: runningRecord?.steps.map((s) => `${s.key}:${s.status}:${s.error?.name}`),
      attempts: runningRecord?.steps[0]?.attemptLog.map((a) => `${a.attempt}:${a.status}:${a.error?.name}`),
      sleeping: (await t.engine.get(ORG, sleeping.runId))?.steps.map((s) => `${s.key}:${s.kind}:${s.status}`),
    }).toEqual({
      status: "terminated",
      error: { name: "Terminated", message: "the run was terminated" },
      // Cut short, not failed: the step and its attempt say so.
      steps: ["wait:terminated:Terminated"],
      attempts: ["1:terminated:Terminated"],
      sleeping: ["before:do:complete", "nap:sleep:terminated"],
    });
  });

  test("a run terminated through another connection is stopped at the next heartbeat", async () => {
    await using t = await testEngine({ heartbeatMs: 50 });
    await t.engine.start();
    const { runId } = await t.engine.enqueue({
      orgId: ORG,
      loopId: "loop_slow",
      input: { ms: 60_000 },
      trigger: TRIGGER,
    });
    await waitFor(
      async () =>
        t.engine.activeCount === 1 && (await t.engine.get(ORG, runId))?.steps.length === 1 ? true : undefined,
      "the run to start",
    );
    const other = openDatabase(join(t.dir, "health.db"));
    try {
      const admin = createEngine({ sqlite: other.sqlite, loops: new Map() });
      expect((await admin.terminate(ORG, runId)).ok).toBe(true);
    } finally {
      other.close();
    }
    await waitFor(() => (t.engine.activeCount === 0 ? true : undefined), "the worker to be stopped");
    expect((await t.engine.get(ORG, runId))?.status).toBe("terminated");
  });
});

describe("list", () => {
  test("newest first, filtered, paginated with an opaque cursor", async () => {
    await using t = await testEngine();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await t.engine.enqueue({ orgId: ORG, loopId: i % 2 === 0 ? "loop_a" : "loop_b", input: i, trigger: TRIGGER }))
          .runId,
      );
    await t.engine.enqueue({ orgId: "org_other", loopId: "loop_a", input: 9, trigger: TRIGGER });
    await t.engine.terminate(ORG, ids[0] ?? "");

    const first = await t.engine.list(ORG, { limit: 2 });
    if (!first.ok) throw new Error(first.error.message);
    const second = await t.engine.list(ORG, { limit: 2, cursor: first.value.nextCursor ?? undefined });
    if (!second.ok) throw new Error(second.error.message);
    const third = await t.engine.list(ORG, { limit: 2, cursor: second.value.nextCursor ?? undefined });
    if (!third.ok) throw new Error(third.error.message);
    expect([first, second, third].map((page) => (page.ok ? page.value.runs.map((r) => r.input) : []))).toEqual([
      [4, 3],
      [2, 1],
      [0],
    ]);
    expect(third.ok && third.value.nextCursor).toBeNull();

    const onlyA = await t.engine.list(ORG, { loopId: "loop_a" });
    expect(onlyA.ok && onlyA.value.runs.map((r) => r.input)).toEqual([4, 2, 0]);
    const terminated = await t.engine.list(ORG, { status: "terminated" });
    expect(terminated.ok && terminated.value.runs.map((r) => r.id)).toEqual(ids.slice(0, 1));
    const queuedA = await t.engine.list(ORG, { loopId: "loop_a", status: "queued", limit: 1000 });
    expect(queuedA.ok && queuedA.value.runs.map((r) => r.input)).toEqual([4, 2]);
    expect(await t.engine.list(ORG, { cursor: "garbage" })).toEqual({
      ok: false,
      error: { code: "invalid_cursor", message: "the cursor is not one this server issued" },
    });
  });
});
