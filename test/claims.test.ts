/**
 * Claiming runs across instances, one suite for both dialects: SQLite (core/loop/claims.ts, two
 * connections to one file) and PostgreSQL (core/loop/claims-postgres.ts, two connection pools to
 * one database). Two claimers working the same queue at once never take the same run, take every
 * run exactly once, and never exceed an organization's or a loop's limit between them; a lapsed
 * lease is taken over, and a dead engine's runs are given up at registration.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type AsyncClaims, createPostgresClaims } from "../core/loop/claims-postgres.ts";
import { type ClaimLimits, createClaims } from "../core/loop/claims.ts";
import * as pgTables from "../schema/pg-tables.ts";
import * as liteTables from "../schema/tables.ts";
import { openPostgres } from "../server/db-postgres.ts";
import { openDatabase } from "../server/db.ts";
import { hasPostgres, startPostgres, type TestPostgres, warnIfNoPostgres } from "./support/postgres.ts";
import { tempDir } from "./support/temp-dir.ts";

warnIfNoPostgres("the PostgreSQL half of the claim tests");

const T0 = Date.UTC(2031, 4, 6, 12, 0, 0);
const LEASE_MS = 30_000;

type RunRow = typeof liteTables.runs.$inferInsert;

/** Two claimers on one database, and what the test needs to read and change its runs. */
interface Harness {
  claimers: [AsyncClaims, AsyncClaims];
  insertRuns(rows: RunRow[]): Promise<void>;
  /** Running runs per organization and per (organization, loop). */
  running(): Promise<Array<{ orgId: string; loopId: string; n: number }>>;
  /** Ends every running run, as a finished step would. */
  completeRunning(): Promise<void>;
  run(id: string): Promise<{ status: string; leaseOwner: string | null; attempts: number } | undefined>;
  addEngine(row: { owner: string; host: string; pid: number; seenAt: number }): Promise<void>;
  close(): Promise<void>;
}

let postgres: TestPostgres | undefined;
afterAll(async () => {
  await postgres?.[Symbol.asyncDispose]();
});

const dialects: Array<{ name: string; skip: boolean; open: () => Promise<Harness> }> = [
  {
    name: "SQLite",
    skip: false,
    async open() {
      const dir = tempDir("health-claims-");
      const file = `file:${join(dir, "health.db")}`;
      const [a, b] = [openDatabase(file), openDatabase(file)];
      // The same synchronous claims, seen through promises: what the engine would await.
      const asAsync = (claims: ReturnType<typeof createClaims>): AsyncClaims => ({
        claim: async (...args) => claims.claim(...args),
        register: async (...args) => claims.register(...args),
        unregister: async (...args) => claims.unregister(...args),
        renew: async (...args) => claims.renew(...args),
        release: async (...args) => claims.release(...args),
        nextWakeAt: async () => claims.nextWakeAt(),
      });
      const { runs, loopEngines } = liteTables;
      return {
        claimers: [asAsync(createClaims(a.sqlite)), asAsync(createClaims(b.sqlite))],
        async insertRuns(rows) {
          a.sqlite.transaction(() => {
            for (const row of rows) a.orm.insert(runs).values(row).run();
          })();
        },
        running: async () =>
          a.sqlite
            .query<{ orgId: string; loopId: string; n: number }, []>(
              "SELECT orgId, loopId, count(*) AS n FROM runs WHERE status = 'running' GROUP BY orgId, loopId",
            )
            .all(),
        async completeRunning() {
          a.sqlite.run("UPDATE runs SET status = 'complete', leaseOwner = NULL WHERE status = 'running'");
        },
        run: async (id) =>
          a.sqlite
            .query<{ status: string; leaseOwner: string | null; attempts: number }, [string]>(
              "SELECT status, leaseOwner, attempts FROM runs WHERE id = ?",
            )
            .get(id) ?? undefined,
        async addEngine(row) {
          a.orm
            .insert(loopEngines)
            .values({ ...row, startedAt: row.seenAt })
            .run();
        },
        async close() {
          a.close();
          b.close();
          dir[Symbol.dispose]();
        },
      };
    },
  },
  {
    name: "PostgreSQL",
    skip: !hasPostgres,
    async open() {
      postgres ??= await startPostgres();
      const url = await postgres.createDatabase();
      const [a, b] = [await openPostgres(url), await openPostgres(url)];
      const { runs, loopEngines } = pgTables;
      return {
        claimers: [createPostgresClaims(a.orm), createPostgresClaims(b.orm)],
        async insertRuns(rows) {
          for (let i = 0; i < rows.length; i += 500) await a.orm.insert(runs).values(rows.slice(i, i + 500));
        },
        running: () =>
          a.client`SELECT "orgId", "loopId", count(*)::int AS n FROM runs WHERE status = 'running' GROUP BY 1, 2`,
        async completeRunning() {
          await a.client`UPDATE runs SET status = 'complete', "leaseOwner" = NULL WHERE status = 'running'`;
        },
        async run(id) {
          const [row] = await a.client`SELECT status, "leaseOwner", attempts FROM runs WHERE id = ${id}`;
          return row;
        },
        async addEngine(row) {
          await a.orm.insert(loopEngines).values({ ...row, startedAt: row.seenAt });
        },
        async close() {
          await Promise.all([a.close(), b.close()]);
        },
      };
    },
  },
];

let serial = 0;
function queuedRuns(orgs: string[], loops: string[], perPair: number): RunRow[] {
  const rows: RunRow[] = [];
  for (let i = 0; i < perPair; i++) {
    for (const orgId of orgs) {
      for (const loopId of loops) {
        serial += 1;
        const id = `run_${String(serial).padStart(8, "0")}`;
        rows.push({
          id,
          workflowInstanceId: `wf_${id}`,
          orgId,
          loopId,
          triggerKind: "token",
          triggerId: "tok_test",
          triggerName: "test",
          status: "queued",
          createdAt: T0 + serial,
          updatedAt: T0 + serial,
        });
      }
    }
  }
  return rows;
}

describe.each(dialects)("claims on $name", ({ skip, open }) => {
  let h: Harness;
  beforeEach(async () => {
    if (skip) return;
    await h?.close();
    h = await open();
  });
  afterAll(async () => {
    await h?.close();
  });

  test.skipIf(skip)(
    "two claimers at once: every run taken exactly once, never by both, within the organization's limit",
    async () => {
      const orgs = ["org_a", "org_b", "org_c"];
      const rows = queuedRuns(orgs, ["loop_x", "loop_y"], 50); // 300 runs
      await h.insertRuns(rows);
      const limits: ClaimLimits = { max: 25, perOrg: 5, perLoop: () => undefined };
      const takenBy = new Map<string, string[]>();
      let now = T0 + 1_000;
      for (let pass = 0; pass < 100 && takenBy.size < rows.length; pass++) {
        now += 10;
        const [first, second] = await Promise.all(
          h.claimers.map((claims, i) => claims.claim(`engine-${i}`, now, now + LEASE_MS, limits)),
        );
        for (const [owner, claimed] of [
          ["engine-0", first],
          ["engine-1", second],
        ] as const) {
          for (const run of claimed ?? []) takenBy.set(run.id, [...(takenBy.get(run.id) ?? []), owner]);
        }
        const perOrg = new Map<string, number>();
        for (const { orgId, n } of await h.running()) perOrg.set(orgId, (perOrg.get(orgId) ?? 0) + Number(n));
        expect(Math.max(0, ...perOrg.values())).toBeLessThanOrEqual(limits.perOrg);
        await h.completeRunning();
      }
      expect(takenBy.size).toBe(rows.length);
      expect([...takenBy.values()].filter((owners) => owners.length !== 1)).toEqual([]);
    },
  );

  test.skipIf(skip)("organizations take turns within a pass: a burst of one does not starve another", async () => {
    await h.insertRuns(queuedRuns(["org_busy"], ["loop_x"], 20));
    await h.insertRuns(queuedRuns(["org_quiet"], ["loop_x"], 1));
    const limits: ClaimLimits = { max: 2, perOrg: 100, perLoop: () => undefined };
    const claimed = await h.claimers[0].claim("engine-0", T0 + 1_000, T0 + 1_000 + LEASE_MS, limits);
    expect(claimed.map((run) => run.orgId).sort()).toEqual(["org_busy", "org_quiet"]);
  });

  test.skipIf(skip)("a loop's limit holds across claimers", async () => {
    await h.insertRuns(queuedRuns(["org_a"], ["loop_x", "loop_y"], 10));
    const limits: ClaimLimits = { max: 10, perOrg: 100, perLoop: (loopId) => (loopId === "loop_x" ? 3 : undefined) };
    const [first, second] = await Promise.all(
      h.claimers.map((claims, i) => claims.claim(`engine-${i}`, T0 + 1_000, T0 + 1_000 + LEASE_MS, limits)),
    );
    const byLoop = new Map((await h.running()).map((row) => [row.loopId, Number(row.n)]));
    expect(byLoop.get("loop_x")).toBeLessThanOrEqual(3);
    expect((first?.length ?? 0) + (second?.length ?? 0)).toBe([...byLoop.values()].reduce((a, b) => a + b, 0));
  });

  test.skipIf(skip)("a lapsed lease is taken over, counted as another attempt; the old holder learns it", async () => {
    const rows = queuedRuns(["org_a"], ["loop_x"], 3);
    await h.insertRuns(rows);
    const limits: ClaimLimits = { max: 10, perOrg: 10, perLoop: () => undefined };
    const [dead, alive] = h.claimers;
    expect(await dead.claim("engine-dead", T0, T0 + LEASE_MS, limits)).toHaveLength(3);
    expect(await alive.claim("engine-alive", T0 + 1_000, T0 + 1_000 + LEASE_MS, limits)).toEqual([]);
    const later = T0 + LEASE_MS + 1;
    const taken = await alive.claim("engine-alive", later, later + LEASE_MS, limits);
    expect(taken.map((run) => run.id).sort()).toEqual(rows.map((row) => row.id).sort());
    expect(await h.run(rows[0]?.id ?? "")).toEqual({ status: "running", leaseOwner: "engine-alive", attempts: 2 });
    expect(await dead.renew("engine-dead", later, later + LEASE_MS)).toEqual(new Set());
    expect(await alive.renew("engine-alive", later, later + LEASE_MS)).toEqual(new Set(rows.map((row) => row.id)));
  });

  test.skipIf(skip)("lapsed leases taken back by two claimers at once: each run by one of them", async () => {
    const rows = queuedRuns(["org_a", "org_b"], ["loop_x"], 100).map((row) => ({
      ...row,
      status: "running" as const,
      leaseOwner: "engine-dead",
      leaseExpiresAt: T0,
    }));
    await h.insertRuns(rows);
    const limits: ClaimLimits = { max: 40, perOrg: 1_000, perLoop: () => undefined };
    const takenBy = new Map<string, number>();
    for (let pass = 0; pass < 10 && takenBy.size < rows.length; pass++) {
      const now = T0 + LEASE_MS + pass;
      const claimed = await Promise.all(h.claimers.map((c, i) => c.claim(`engine-${i}`, now, now + LEASE_MS, limits)));
      for (const run of claimed.flat()) takenBy.set(run.id, (takenBy.get(run.id) ?? 0) + 1);
    }
    expect(takenBy.size).toBe(rows.length);
    expect([...takenBy.values()].filter((times) => times !== 1)).toEqual([]);
  });

  test.skipIf(skip)(
    "registering gives up the runs of an engine that stopped heartbeating, not a live one's",
    async () => {
      const rows = queuedRuns(["org_a"], ["loop_x"], 2);
      await h.insertRuns(rows);
      const limits: ClaimLimits = { max: 1, perOrg: 10, perLoop: () => undefined };
      const [one, two] = h.claimers;
      await h.addEngine({ owner: "engine-stale", host: "elsewhere", pid: 1, seenAt: T0 - 2 * LEASE_MS });
      await h.addEngine({ owner: "engine-live", host: "elsewhere", pid: 1, seenAt: T0 });
      expect(await one.claim("engine-stale", T0, T0 + LEASE_MS, limits)).toHaveLength(1);
      expect(await one.claim("engine-live", T0, T0 + LEASE_MS, limits)).toHaveLength(1);
      expect(await two.register("engine-new", T0 + 1, LEASE_MS)).toBe(1);
      const taken = await two.claim("engine-new", T0 + 2, T0 + 2 + LEASE_MS, { ...limits, max: 10 });
      expect(taken).toHaveLength(1);
      expect(await h.run(taken[0]?.id ?? "")).toMatchObject({ leaseOwner: "engine-new" });
      await two.release(taken[0]?.id ?? "", "engine-new");
      expect(await one.claim("engine-other", T0 + 3, T0 + 3 + LEASE_MS, limits)).toHaveLength(1);
      expect(await two.nextWakeAt()).toBeNull();
    },
  );
});
