/**
 * The engine's run store, one suite over both dialects (core/loop/store.ts on SQLite,
 * core/loop/store-postgres.ts on PostgreSQL), with the claims of each: steps and attempts written
 * under a lease and read back for a replay, a lost lease writing nothing, sleeps, terminate and
 * fail closing what was open, list pages through the opaque cursor (PostgreSQL has no rowid), and
 * per-loop figures. On PostgreSQL a terminate raced against step writes never lets a step be
 * recorded complete for a run that was terminated first.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createPostgresClaims } from "../core/loop/claims-postgres.ts";
import { type AsyncClaims, createAsyncClaims } from "../core/loop/claims.ts";
import { createQueries } from "../core/loop/queries.ts";
import { createPostgresRunStore } from "../core/loop/store-postgres.ts";
import { createRunStore, type NewRun, type RunStore } from "../core/loop/store.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";

afterAll(stopPostgres);

const T0 = Date.UTC(2031, 4, 6, 12, 0, 0);
const LEASE_MS = 30_000;
const ORG = "org_store";
const LIMITS = { max: 10, perOrg: 100, perLoop: () => undefined };

function engineParts(h: DialectHarness): { store: RunStore; claims: AsyncClaims } {
  return h.dialect === "sqlite"
    ? { store: createRunStore(h.db.sqlite), claims: createAsyncClaims(h.db.sqlite) }
    : { store: createPostgresRunStore(h.db.orm), claims: createPostgresClaims(h.db.orm) };
}

const newRun = (id: string, over: Partial<NewRun> = {}): NewRun => ({
  id,
  workflowInstanceId: `wfi_${id}`,
  orgId: ORG,
  loopId: "loop_a",
  input: '{"n":1}',
  triggerKind: "token",
  triggerId: "tok_1",
  triggerName: "test token",
  now: T0,
  ...over,
});

const step = (runId: string, key: string, owner: string, now: number, idx = 0) => ({
  runId,
  key,
  name: key,
  idx,
  owner,
  now,
});

describe.each(dialects("the run store suite"))("run store on $name", ({ skip, open }) => {
  async function withStore<T>(work: (parts: { store: RunStore; claims: AsyncClaims }) => Promise<T>): Promise<T> {
    const h = await open();
    try {
      return await work(engineParts(h));
    } finally {
      await h.close();
    }
  }

  test.skipIf(skip)("steps and attempts persist under the lease and replay; a lost run's writes change nothing", () =>
    withStore(async ({ store, claims }) => {
      await store.insertRun(newRun("run_1"));
      expect((await claims.claim("eng_a", T0, T0 + LEASE_MS, LIMITS)).map((r) => r.id)).toEqual(["run_1"]);
      expect(await store.recordAttempt({ ...step("run_1", "fetch", "eng_a", T0 + 1), attempt: 1 })).toBe(true);
      await store.recordAttemptError("run_1", "fetch", 1, { name: "Error", message: "boom" }, T0 + 2);
      expect(await store.recordAttempt({ ...step("run_1", "fetch", "eng_a", T0 + 3), attempt: 2 })).toBe(true);
      expect(
        await store.finishStep({
          ...step("run_1", "fetch", "eng_a", T0 + 4),
          status: "complete",
          result: '{"ok":true}',
          error: null,
          attempts: 2,
        }),
      ).toBe(true);

      // What a replay is given: the completed step with its stored result.
      expect(await store.storedSteps("run_1", T0 + 5)).toEqual([
        {
          key: "fetch",
          kind: "do",
          status: "complete",
          result: '{"ok":true}',
          errorName: null,
          errorMessage: null,
          attempts: 2,
          wakeAt: null,
        },
      ]);
      expect(
        (await store.getAttempts("run_1")).map((a) => [a.attempt, a.status, a.error, a.startedAt, a.finishedAt]),
      ).toEqual([
        [1, "errored", '{"name":"Error","message":"boom"}', T0 + 1, T0 + 2],
        [2, "complete", null, T0 + 3, T0 + 4],
      ]);
      expect(await store.attemptSpans("run_1")).toEqual([
        { key: "fetch", name: "fetch", attempt: 1, status: "errored", startedAt: T0 + 1, finishedAt: T0 + 2 },
        { key: "fetch", name: "fetch", attempt: 2, status: "complete", startedAt: T0 + 3, finishedAt: T0 + 4 },
      ]);

      // Given back, and taken by another engine: the first one's writes no longer land.
      expect(await store.requeue("run_1", "eng_a", T0 + 6)).toBe(true);
      expect((await claims.claim("eng_b", T0 + 7, T0 + 7 + LEASE_MS, LIMITS)).map((r) => r.id)).toEqual(["run_1"]);
      const late = step("run_1", "next", "eng_a", T0 + 8, 1);
      expect(
        await Promise.all([
          store.recordAttempt({ ...late, attempt: 1 }),
          store.finishStep({ ...late, status: "complete", result: "1", error: null, attempts: 1 }),
          store.completeSleep({ ...late, wakeAt: T0 }),
          store.suspend({ ...late, wakeAt: T0 + 60_000 }),
          store.complete("run_1", "eng_a", T0 + 8, '"stolen"'),
          store.fail("run_1", "eng_a", T0 + 8, { name: "Error", message: "late" }),
          store.requeue("run_1", "eng_a", T0 + 8),
        ]),
      ).toEqual([false, false, false, false, false, false, false]);
      expect((await store.getSteps("run_1")).map((s) => s.key)).toEqual(["fetch"]);

      expect(await store.complete("run_1", "eng_b", T0 + 9, '{"done":true}')).toBe(true);
      const row = await store.getRun(ORG, "run_1");
      expect(row).toMatchObject({
        status: "complete",
        output: '{"done":true}',
        attempts: 2,
        leaseOwner: null,
        finishedAt: T0 + 9,
      });
      expect(await store.getRun("org_other", "run_1")).toBeNull();
    }),
  );

  test.skipIf(skip)("a sleep releases the run until its time; the replay finds it complete", () =>
    withStore(async ({ store, claims }) => {
      await store.insertRun(newRun("run_s"));
      await claims.claim("eng_a", T0, T0 + LEASE_MS, LIMITS);
      expect(await store.completeSleep({ ...step("run_s", "now", "eng_a", T0 + 1), wakeAt: T0 })).toBe(true);
      expect(await store.suspend({ ...step("run_s", "nap", "eng_a", T0 + 2, 1), wakeAt: T0 + 1_000 })).toBe(true);
      expect(await store.getRun(ORG, "run_s")).toMatchObject({
        status: "sleeping",
        wakeAt: T0 + 1_000,
        leaseOwner: null,
        leaseExpiresAt: null,
      });
      expect(await claims.nextWakeAt()).toBe(T0 + 1_000);
      expect(await claims.claim("eng_a", T0 + 500, T0 + 500 + LEASE_MS, LIMITS)).toEqual([]);
      expect((await store.storedSteps("run_s", T0 + 500)).map((s) => `${s.key}:${s.status}`)).toEqual(
        expect.arrayContaining(["now:complete", "nap:sleeping"]),
      );
      expect((await claims.claim("eng_b", T0 + 1_000, T0 + 1_000 + LEASE_MS, LIMITS)).map((r) => r.id)).toEqual([
        "run_s",
      ]);
      const replay = await store.storedSteps("run_s", T0 + 1_000);
      expect(replay.map((s) => `${s.key}:${s.kind}:${s.status}`).sort()).toEqual([
        "nap:sleep:complete",
        "now:sleep:complete",
      ]);
    }),
  );

  test.skipIf(skip)("terminate and fail close the step and attempt left open; finished runs are told apart", () =>
    withStore(async ({ store, claims }) => {
      await store.insertRun(newRun("run_t"));
      await store.insertRun(newRun("run_f"));
      await store.insertRun(newRun("run_q", { loopId: "loop_b" }));
      await claims.claim("eng_a", T0, T0 + LEASE_MS, { ...LIMITS, perLoop: (loopId) => (loopId === "loop_b" ? 0 : 5) });
      for (const runId of ["run_t", "run_f"])
        expect(await store.recordAttempt({ ...step(runId, "wait", "eng_a", T0 + 1), attempt: 1 })).toBe(true);

      expect(await store.terminate("org_other", "run_t", T0 + 2)).toBe(false);
      expect(await store.terminate(ORG, "run_t", T0 + 2)).toBe(true);
      expect(await store.terminate(ORG, "run_t", T0 + 3)).toBe(false);
      expect(await store.terminate(ORG, "run_q", T0 + 3)).toBe(true);
      expect(
        await store.finishStep({
          ...step("run_t", "wait", "eng_a", T0 + 4),
          status: "complete",
          result: "1",
          error: null,
          attempts: 1,
        }),
      ).toBe(false);
      expect(await store.fail("run_f", "eng_a", T0 + 5, { name: "Error", message: "gave up" })).toBe(true);

      const summary = async (runId: string) => {
        const run = await store.getRun(ORG, runId);
        const steps = await store.getSteps(runId);
        const attempts = await store.getAttempts(runId);
        return {
          status: run?.status,
          error: run?.error,
          steps: steps.map((s) => `${s.key}:${s.status}:${s.error}`),
          attempts: attempts.map((a) => `${a.attempt}:${a.status}`),
        };
      };
      const terminated = '{"name":"Terminated","message":"the run was terminated"}';
      const ended = '{"name":"RunEnded","message":"the run ended before this step finished"}';
      expect(await summary("run_t")).toEqual({
        status: "terminated",
        error: terminated,
        steps: [`wait:terminated:${terminated}`],
        attempts: ["1:terminated"],
      });
      expect(await summary("run_f")).toEqual({
        status: "errored",
        error: '{"name":"Error","message":"gave up"}',
        steps: [`wait:errored:${ended}`],
        attempts: ["1:errored"],
      });
      expect((await summary("run_q")).status).toBe("terminated");

      const queries = createQueries(store, () => T0 + 10);
      expect(await queries.terminate(ORG, "run_f")).toEqual({
        ok: false,
        error: { code: "already_finished", message: "run run_f already finished (errored)", status: "errored" },
      });
      expect(await queries.terminate(ORG, "run_none")).toEqual({
        ok: false,
        error: { code: "not_found", message: "no run run_none in this organization" },
      });
    }),
  );

  test.skipIf(skip)("list pages newest first through the opaque cursor, runs of one millisecond included", () =>
    withStore(async ({ store }) => {
      // Four runs share a createdAt: the page boundary falls among them.
      const spec: Array<[string, number, string]> = [
        ["run_a", T0, "loop_a"],
        ["run_b", T0, "loop_b"],
        ["run_c", T0, "loop_a"],
        ["run_d", T0, "loop_b"],
        ["run_e", T0 + 1, "loop_a"],
        ["run_f", T0 + 1, "loop_a"],
        ["run_g", T0 + 2, "loop_b"],
      ];
      for (const [id, now, loopId] of spec) await store.insertRun(newRun(id, { now, loopId }));
      await store.insertRun(newRun("run_x", { orgId: "org_other", now: T0 + 5 }));
      await store.terminate(ORG, "run_c", T0 + 3);

      const queries = createQueries(store, () => T0 + 10);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const result = await queries.list(ORG, { limit: 3, ...(cursor === undefined ? {} : { cursor }) });
        if (!result.ok) throw new Error(result.error.message);
        seen.push(...result.value.runs.map((r) => r.id));
        if (result.value.nextCursor === null) break;
        cursor = result.value.nextCursor;
      }
      expect(seen).toEqual(["run_g", "run_f", "run_e", "run_d", "run_c", "run_b", "run_a"]);

      const onlyA = await queries.list(ORG, { loopId: "loop_a", limit: 2 });
      if (!onlyA.ok) throw new Error(onlyA.error.message);
      expect(onlyA.value.runs.map((r) => r.id)).toEqual(["run_f", "run_e"]);
      const restA = await queries.list(ORG, { loopId: "loop_a", limit: 2, cursor: onlyA.value.nextCursor ?? "" });
      expect(restA.ok && restA.value.runs.map((r) => r.id)).toEqual(["run_c", "run_a"]);
      const terminated = await queries.list(ORG, { status: "terminated" });
      expect(terminated.ok && terminated.value.runs.map((r) => r.id)).toEqual(["run_c"]);
      for (const cursor of ["garbage", Buffer.from("12.run a").toString("base64url"), ""]) {
        expect(await queries.list(ORG, { cursor })).toEqual({
          ok: false,
          error: { code: "invalid_cursor", message: "the cursor is not one this server issued" },
        });
      }
    }),
  );

  test.skipIf(skip)("loop figures: runs of the window by outcome, and the latest run; unfinished runs by status", () =>
    withStore(async ({ store, claims }) => {
      await store.insertRun(newRun("run_old", { now: T0 - 100_000 }));
      await store.insertRun(newRun("run_ok", { now: T0 }));
      await store.insertRun(newRun("run_bad", { now: T0 + 1 }));
      await store.insertRun(newRun("run_other", { now: T0 + 3, loopId: "loop_b" }));
      await claims.claim("eng_a", T0 + 5, T0 + 5 + LEASE_MS, LIMITS);
      expect(await store.complete("run_ok", "eng_a", T0 + 6, null)).toBe(true);
      expect(await store.fail("run_bad", "eng_a", T0 + 6, { name: "Error", message: "no" })).toBe(true);
      await store.insertRun(newRun("run_wait", { now: T0 + 2 }));
      const queries = createQueries(store, () => T0 + 10);
      expect(await queries.loopStats(ORG, "loop_a", 50_000)).toEqual({
        runs: 3,
        complete: 1,
        errored: 1,
        lastRun: { status: "queued", createdAt: new Date(T0 + 2).toISOString() },
      });
      // Every organization's unfinished runs (metrics).
      expect(await store.unfinishedCounts()).toEqual({ queued: 1, running: 2, sleeping: 0 });
      expect(await queries.loopStats(ORG, "loop_none", 50_000)).toEqual({
        runs: 0,
        complete: 0,
        errored: 0,
        lastRun: null,
      });
    }),
  );

  test.skipIf(skip)("a terminate racing the step writes: a step is never recorded complete after it", () =>
    withStore(async ({ store, claims }) => {
      for (let i = 0; i < 20; i++) {
        const runId = `run_race${i}`;
        await store.insertRun(newRun(runId));
        await claims.claim("eng_a", T0, T0 + LEASE_MS, LIMITS);
        await store.recordAttempt({ ...step(runId, "s", "eng_a", T0 + 1), attempt: 1 });
        const [finished, terminated] = await Promise.all([
          store.finishStep({
            ...step(runId, "s", "eng_a", T0 + 2),
            status: "complete",
            result: "1",
            error: null,
            attempts: 1,
          }),
          store.terminate(ORG, runId, T0 + 2),
        ]);
        expect(terminated).toBe(true);
        const [row] = await store.getSteps(runId);
        // Either the step committed first (and stays complete), or the terminate did and it was cut short.
        expect(row?.status).toBe(finished ? "complete" : "terminated");
        expect((await store.getRun(ORG, runId))?.status).toBe("terminated");
      }
    }),
  );
});
