/**
 * The engine end to end over both dialects: the same engine (core/loop/engine.ts) on an SQLite
 * file and on a PostgreSQL database, each engine with its own connection as separate instances
 * would have. Runs complete with their steps, sleep and wake, are terminated (the loss of the
 * lease seen at the next heartbeat), survive a kill -9 of the engine process with no persisted
 * step run again, and two engines sharing one database complete every run exactly once. Over a
 * slow database claim passes and heartbeats never overlap; over a failing one the run goes back to
 * the queue and nothing rejects unhandled, and stop() waits for the writes in flight.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type AsyncClaims, createAsyncClaims } from "../core/loop/claims.ts";
import { createEngine, type Engine, type EngineDatabase, type EngineSettings } from "../core/loop/engine.ts";
import type { RunEnded } from "../core/loop/runner.ts";
import { createRunStore, type RunStore } from "../core/loop/store.ts";
import { openPostgres } from "../server/db-postgres.ts";
import { openDatabase } from "../server/db.ts";
import {
  lineCounts,
  loadFixtureLoops,
  logLines,
  ORG,
  startEngineProcess,
  TRIGGER,
  tempDir,
  waitFor,
  waitForStatus,
} from "./support/loops.ts";
import { hasPostgres, startPostgres, type TestPostgres, warnIfNoPostgres } from "./support/postgres.ts";

warnIfNoPostgres("the PostgreSQL half of the engine suite");

let cluster: TestPostgres | undefined;
afterAll(async () => {
  await cluster?.[Symbol.asyncDispose]();
});

/** One database for one test: where it is (for a child process), and connections to it. */
interface Place extends AsyncDisposable {
  location: string;
  dir: string;
  connect(): Promise<{ database: EngineDatabase; close(): Promise<void> }>;
}

const places: Array<{ name: string; skip: boolean; open(): Promise<Place> }> = [
  {
    name: "SQLite",
    skip: false,
    async open() {
      const dir = tempDir("health-dialects-");
      return {
        location: join(dir, "health.db"),
        dir,
        async connect() {
          const db = openDatabase(join(dir, "health.db"));
          return { database: { sqlite: db.sqlite }, close: async () => db.close() };
        },
        async [Symbol.asyncDispose]() {
          dir[Symbol.dispose]();
        },
      };
    },
  },
  {
    name: "PostgreSQL",
    skip: !hasPostgres,
    async open() {
      cluster ??= await startPostgres();
      const url = await cluster.createDatabase();
      const dir = tempDir("health-dialects-");
      return {
        location: url,
        dir,
        async connect() {
          const pg = await openPostgres(url);
          return { database: { postgres: pg.orm }, close: () => pg.close() };
        },
        async [Symbol.asyncDispose]() {
          dir[Symbol.dispose]();
        },
      };
    },
  },
];

/** An engine on its own connection to `place`; stopped and disconnected on dispose. */
async function engineOn(place: Place, settings: Partial<EngineSettings> = {}) {
  const connection = await place.connect();
  const engine = createEngine({ ...connection.database, loops: await loadFixtureLoops(), pollMs: 50, ...settings });
  return {
    engine,
    async [Symbol.asyncDispose]() {
      await engine.stop();
      await connection.close();
    },
  };
}

const enqueueWaits = async (engine: Engine, logFile: string, tag: string, steps: number, waitMs: number) =>
  (
    await engine.enqueue({
      orgId: ORG,
      loopId: "loop_waits",
      input: { logFile, tag, steps, waitMs },
      trigger: TRIGGER,
    })
  ).runId;

describe.each(places)("the engine on $name", ({ skip, open }) => {
  test.skipIf(skip)("a run completes with its steps, attempts and output", async () => {
    await using place = await open();
    await using t = await engineOn(place);
    await t.engine.start();
    const { runId } = await t.engine.enqueue({ orgId: ORG, loopId: "loop_echo", input: { a: 1 }, trigger: TRIGGER });
    const run = await waitForStatus(t.engine, runId, ["complete", "errored"], 10_000);
    expect({
      status: run.status,
      output: run.output,
      steps: run.steps.map((s) => `${s.key}:${s.status}:${s.attemptLog.map((a) => a.status).join(",")}`),
    }).toEqual({
      status: "complete",
      output: { seen: { isUndefined: false, body: { a: 1 } }, counts: [1, 2], nothing: "undefined" },
      steps: [
        "look:complete:complete",
        "count:complete:complete",
        "count#2:complete:complete",
        "nothing:complete:complete",
      ],
    });
    expect(await t.engine.loopStats(ORG, "loop_echo", 60_000)).toMatchObject({ runs: 1, complete: 1, errored: 0 });
  });

  test.skipIf(skip)(
    "a sleeping run holds no slot, wakes on time, and its steps before the sleep run once",
    async () => {
      await using place = await open();
      await using t = await engineOn(place, { pollMs: 10_000 });
      await t.engine.start();
      const logFile = join(place.dir, "sleeper.log");
      const { runId } = await t.engine.enqueue({
        orgId: ORG,
        loopId: "loop_sleeper",
        input: { logFile, sleepMs: 400 },
        trigger: TRIGGER,
      });
      const sleeping = await waitForStatus(t.engine, runId, ["sleeping"], 10_000);
      expect({ active: t.engine.activeCount, nap: sleeping.steps.find((s) => s.key === "nap")?.status }).toEqual({
        active: 0,
        nap: "sleeping",
      });
      // The poll is 10 s: only the engine's wake timer finishes this in time.
      const run = await waitForStatus(t.engine, runId, ["complete"], 5_000);
      expect(run.steps.map((s) => `${s.key}:${s.status}`)).toEqual([
        "before:complete",
        "nap:complete",
        "instant:complete",
        "after:complete",
      ]);
      expect(logLines(logFile)).toEqual(["before", "after"]);
    },
  );

  test.skipIf(skip)("terminate stops a running run here; through another instance, at the next heartbeat", async () => {
    await using place = await open();
    await using t = await engineOn(place, { heartbeatMs: 50 });
    await using other = await engineOn(place);
    await t.engine.start();
    const startedSlow = async () => {
      const { runId } = await t.engine.enqueue({
        orgId: ORG,
        loopId: "loop_slow",
        input: { ms: 60_000 },
        trigger: TRIGGER,
      });
      await waitFor(
        async () => ((await t.engine.get(ORG, runId))?.steps[0]?.status === "running" ? true : undefined),
        "the slow step to start",
        10_000,
      );
      return runId;
    };
    const here = await startedSlow();
    expect(await t.engine.terminate(ORG, here)).toEqual({ ok: true, value: { status: "terminated" } });
    expect(t.engine.activeCount).toBe(0);

    // Terminated by an instance that does not execute it: this engine learns it lost the run.
    const there = await startedSlow();
    expect(await other.engine.terminate(ORG, there)).toEqual({ ok: true, value: { status: "terminated" } });
    await waitFor(() => (t.engine.activeCount === 0 ? true : undefined), "the run to be dropped", 5_000);
    const run = await t.engine.get(ORG, there);
    expect({ status: run?.status, steps: run?.steps.map((s) => `${s.key}:${s.status}`) }).toEqual({
      status: "terminated",
      steps: ["wait:terminated"],
    });
    expect(await other.engine.terminate(ORG, there)).toMatchObject({ ok: false, error: { code: "already_finished" } });
  });

  test.skipIf(skip)(
    "after kill -9 of an engine process, another completes every run; no persisted step runs again",
    async () => {
      await using place = await open();
      const logFile = join(place.dir, "steps.log");
      await using client = await engineOn(place);
      const RUNS = 6;
      const STEPS = 12;
      const runIds: string[] = [];
      for (let i = 0; i < RUNS; i++) runIds.push(await enqueueWaits(client.engine, logFile, `run${i}`, STEPS, 15));
      const { proc: first } = await startEngineProcess(place.location, {
        pollMs: 50,
        leaseMs: 5_000,
        heartbeatMs: 500,
      });
      try {
        await waitFor(() => (logLines(logFile).length >= 20 ? true : undefined), "20 steps before the kill", 15_000);
      } finally {
        first.kill(9);
      }
      await first.exited;

      const atKill = await Promise.all(runIds.map((id) => client.engine.get(ORG, id)));
      const persisted = atKill.flatMap((run, i) =>
        (run?.steps ?? []).filter((s) => s.status === "complete").map((s) => `run${i} ${s.key}`),
      );
      expect(atKill.filter((run) => run?.status === "complete").length).toBeLessThan(RUNS);
      expect(persisted.length).toBeGreaterThan(0);

      // Same host, its process gone: the new engine takes its runs at start, not after the lease.
      await using second = await engineOn(place);
      await second.engine.start();
      for (const runId of runIds)
        expect((await waitForStatus(second.engine, runId, undefined, 15_000)).status).toBe("complete");

      const counts = new Map<string, number>();
      for (const [line, n] of lineCounts(logFile)) {
        const step = line.split(" ").slice(0, 2).join(" ");
        counts.set(step, (counts.get(step) ?? 0) + n);
      }
      expect(persisted.filter((step) => counts.get(step) !== 1)).toEqual([]);
      const every = runIds.flatMap((_, r) => Array.from({ length: STEPS }, (_, s) => `run${r} step-${s}`));
      expect(every.filter((step) => (counts.get(step) ?? 0) < 1)).toEqual([]);
      // Only a step in flight at the kill (one per executing run) may have run twice.
      expect(every.filter((step) => (counts.get(step) ?? 0) > 2)).toEqual([]);
      expect(every.filter((step) => (counts.get(step) ?? 0) === 2).length).toBeLessThanOrEqual(RUNS);
    },
  );

  test.skipIf(skip)("two engines on one database complete every run exactly once, no step twice", async () => {
    await using place = await open();
    const logFile = join(place.dir, "steps.log");
    const ended: Array<RunEnded & { by: string }> = [];
    await using a = await engineOn(place, {
      threads: 1,
      concurrency: 8,
      onRunEnded: (run) => ended.push({ ...run, by: "a" }),
    });
    await using b = await engineOn(place, {
      threads: 1,
      concurrency: 8,
      onRunEnded: (run) => ended.push({ ...run, by: "b" }),
    });
    await a.engine.start();
    await b.engine.start();
    const N = 40;
    const STEPS = 3;
    const runIds: string[] = [];
    for (let i = 0; i < N; i++)
      runIds.push(await enqueueWaits(i % 2 === 0 ? a.engine : b.engine, logFile, `r${i}`, STEPS, 5));
    await waitFor(() => (ended.length >= N ? true : undefined), `${N} runs to end`, 30_000);
    // Settle: nothing ends twice afterwards.
    await Bun.sleep(200);

    const byRun = Map.groupBy(ended, (run) => run.runId);
    expect([...byRun.keys()].sort()).toEqual([...runIds].sort());
    expect([...byRun.values()].filter((runs) => runs.length !== 1 || runs[0]?.status !== "complete")).toEqual([]);
    const statuses = await Promise.all(runIds.map(async (id) => (await a.engine.get(ORG, id))?.status));
    expect(statuses.every((status) => status === "complete")).toBe(true);
    const counts = lineCounts(logFile);
    const lines = runIds.flatMap((_, r) => Array.from({ length: STEPS }, (_, s) => `r${r} step-${s}`));
    const perStep = lines.map((line) =>
      [...counts].filter(([logged]) => logged.startsWith(`${line} `)).reduce((n, [, c]) => n + c, 0),
    );
    expect(perStep.every((n) => n === 1)).toBe(true);
    // Both did work.
    expect(new Set(ended.map((run) => run.by)).size).toBe(2);
  });
});

describe("the engine over a slow or failing database", () => {
  /** SQLite's store and claims, each call of `claims` delayed by `delayMs` and counted while pending. */
  async function slowParts(delayMs: number) {
    const dir = tempDir("health-slow-");
    const db = openDatabase(join(dir, "health.db"));
    const base = createAsyncClaims(db.sqlite);
    const pending = { claim: 0, renew: 0 };
    const most = { claim: 0, renew: 0 };
    async function counted<T>(name: "claim" | "renew", call: () => Promise<T>): Promise<T> {
      pending[name] += 1;
      most[name] = Math.max(most[name], pending[name]);
      try {
        await Bun.sleep(delayMs);
        return await call();
      } finally {
        pending[name] -= 1;
      }
    }
    const claims: AsyncClaims = {
      ...base,
      claim: (...args) => counted("claim", () => base.claim(...args)),
      renew: (...args) => counted("renew", () => base.renew(...args)),
    };
    return {
      db,
      store: createRunStore(db.sqlite),
      claims,
      most,
      async [Symbol.asyncDispose]() {
        db.close();
        dir[Symbol.dispose]();
      },
    };
  }

  test("claim passes and heartbeats never overlap; every run still completes", async () => {
    await using parts = await slowParts(30);
    const engine = createEngine({
      store: parts.store,
      claims: parts.claims,
      loops: await loadFixtureLoops(),
      pollMs: 5,
      heartbeatMs: 5,
    });
    await engine.start();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        ids.push((await engine.enqueue({ orgId: ORG, loopId: "loop_echo", input: i, trigger: TRIGGER })).runId);
        // Triggers spread over several passes, each wake arriving while a pass is under way.
        if (i % 5 === 0) await Bun.sleep(10);
      }
      for (const id of ids) expect((await waitForStatus(engine, id, undefined, 10_000)).status).toBe("complete");
    } finally {
      await engine.stop();
    }
    expect(parts.most).toEqual({ claim: 1, renew: 1 });
  });

  test("a run launched while a renewal is under way is not taken for lost by it", async () => {
    await using parts = await slowParts(0);
    const infos: string[] = [];
    const engine = createEngine({
      store: parts.store,
      // The renewal reads the held runs first, then takes 40 ms to answer, as a round trip may.
      claims: {
        ...parts.claims,
        async renew(...args) {
          const held = await parts.claims.renew(...args);
          await Bun.sleep(40);
          return held;
        },
      },
      loops: await loadFixtureLoops(),
      pollMs: 10,
      heartbeatMs: 15,
      logger: { info: (message) => infos.push(message), warn() {}, error() {} },
    });
    await engine.start();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        ids.push(
          (await engine.enqueue({ orgId: ORG, loopId: "loop_slow", input: { ms: 60 }, trigger: TRIGGER })).runId,
        );
        await Bun.sleep(7);
      }
      const runs = await Promise.all(ids.map((id) => waitForStatus(engine, id, undefined, 10_000)));
      expect(runs.map((run) => `${run.status}:${run.attempts}`)).toEqual(ids.map(() => "complete:1"));
    } finally {
      await engine.stop();
    }
    expect(infos.filter((message) => message.includes("no longer owned"))).toEqual([]);
  });

  test("stop waits for a slow write: the step it acknowledged stays done, and a new engine resumes after it", async () => {
    await using parts = await slowParts(0);
    using logDir = tempDir("health-slow-log-");
    const logFile = join(logDir, "steps.log");
    let slowWrites = 0;
    // Every step's completion takes 150 ms to commit, as a distant database may.
    const store: RunStore = {
      ...parts.store,
      async finishStep(write) {
        slowWrites += 1;
        await Bun.sleep(150);
        return parts.store.finishStep(write);
      },
    };
    const first = createEngine({ store, claims: parts.claims, loops: await loadFixtureLoops(), pollMs: 20 });
    await first.start();
    const { runId } = await first.enqueue({
      orgId: ORG,
      loopId: "loop_waits",
      input: { logFile, tag: "slow", steps: 4, waitMs: 0 },
      trigger: TRIGGER,
    });
    await waitFor(() => (slowWrites >= 2 ? true : undefined), "a second step's write to be under way", 5_000);
    await first.stop();
    // Stopped: every write it started has committed, and the run is back in the queue.
    const stopped = await first.get(ORG, runId);
    const done = (stopped?.steps ?? []).filter((s) => s.status === "complete").map((s) => s.key);
    expect({ status: stopped?.status, done: done.length >= 2 }).toEqual({ status: "queued", done: true });

    const second = createEngine({ sqlite: parts.db.sqlite, loops: await loadFixtureLoops(), pollMs: 20 });
    await second.start();
    try {
      expect((await waitForStatus(second, runId, undefined, 10_000)).status).toBe("complete");
    } finally {
      await second.stop();
    }
    const counts = new Map<string, number>();
    for (const [line, n] of lineCounts(logFile)) counts.set(line.split(" ")[1] ?? "", n);
    expect(done.filter((key) => counts.get(key) !== 1)).toEqual([]);
  });

  test("a write that fails gives the run back to the queue; it resumes, and nothing rejects unhandled", async () => {
    await using parts = await slowParts(0);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    let failures = 1;
    const store: RunStore = {
      ...parts.store,
      async finishStep(write) {
        if (write.key === "count" && failures-- > 0) throw new Error("the database went away");
        return parts.store.finishStep(write);
      },
    };
    const errors: string[] = [];
    const engine = createEngine({
      store,
      claims: parts.claims,
      loops: await loadFixtureLoops(),
      pollMs: 20,
      logger: { info() {}, warn() {}, error: (message) => errors.push(message) },
    });
    await engine.start();
    try {
      const { runId } = await engine.enqueue({ orgId: ORG, loopId: "loop_echo", input: 1, trigger: TRIGGER });
      const run = await waitForStatus(engine, runId, undefined, 10_000);
      expect({ status: run.status, attempts: run.attempts, steps: run.steps.map((s) => s.key) }).toEqual({
        status: "complete",
        attempts: 2,
        steps: ["look", "count", "count#2", "nothing"],
      });
    } finally {
      await engine.stop();
      process.off("unhandledRejection", onUnhandled);
    }
    expect(errors).toEqual(["loop engine: persisting a run failed; the run is requeued"]);
    expect(unhandled).toEqual([]);
  });
});
