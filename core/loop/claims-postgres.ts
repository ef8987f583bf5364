/**
 * Claims (claims.ts) on PostgreSQL: the same operations and the same fairness, answered with
 * promises; the engine takes them with the PostgreSQL run store (engine.ts, store-postgres.ts).
 * test/claims.test.ts runs one suite over both dialects.
 *
 * Where SQLite serialises a whole claim pass with BEGIN IMMEDIATE, here many instances claim at
 * once, in READ COMMITTED transactions:
 * - every run is taken by an UPDATE whose target row is chosen by `SELECT … FOR UPDATE SKIP LOCKED`,
 *   so two claimers never take the same run and never wait on each other's rows;
 * - the limits (runs of an organization, of one of its loops) are counted and claimed against
 *   under a transaction-level advisory lock per organization. It is tried, not waited for: an
 *   organization another instance is serving at this moment is skipped for this pass (it comes
 *   back in the next), so claimers never queue behind one another, and never deadlock over the
 *   order they lock organizations in. The count is read after the lock is held, so it includes
 *   the runs the previous holder claimed and committed;
 * - runs whose lease expired are taken back first, without the lock: they already count as running.
 * Queued runs leave in order of arrival (createdAt, then id), where SQLite uses its rowid.
 */
import { hostname } from "node:os";
import { and, asc, count, eq, inArray, isNotNull, isNull, lt, lte, min, ne, type SQL, sql } from "drizzle-orm";
import type { BunSQLDatabase } from "drizzle-orm/bun-sql";
import * as tables from "../../schema/pg-tables.ts";
import { type AsyncClaims, type ClaimLimits, isEngineGone } from "./claims.ts";
import type { ClaimedRun } from "./store.ts";

const { runs, loopEngines } = tables;

type Orm = BunSQLDatabase<typeof tables>;
type Tx = Parameters<Parameters<Orm["transaction"]>[0]>[0];

export type { AsyncClaims } from "./claims.ts";

/** The first key of the claim locks (ASCII "heal"); the second is the organization's hashtext. */
const CLAIM_LOCK_SPACE = 0x6865616c;

const returning = {
  id: runs.id,
  orgId: runs.orgId,
  loopId: runs.loopId,
  input: runs.input,
  createdAt: runs.createdAt,
  triggerKind: runs.triggerKind,
  triggerId: runs.triggerId,
  traceparent: runs.traceparent,
};

export function createPostgresClaims(db: Orm): AsyncClaims {
  const host = hostname();
  /** The organization served last, so the next pass starts after it. */
  let lastOrg = "";

  const claimSet = (owner: string, now: number, leaseUntil: number) => ({
    status: "running" as const,
    leaseOwner: owner,
    leaseExpiresAt: leaseUntil,
    attempts: sql`${runs.attempts} + 1`,
    startedAt: sql`COALESCE(${runs.startedAt}, ${now}::bigint)`,
    updatedAt: now,
    wakeAt: null,
  });

  /** Takes the runs `pick` selects (locking them, skipping rows another transaction holds). */
  function take(tx: Tx, owner: string, now: number, leaseUntil: number, pick: ReturnType<typeof pickRuns>) {
    return tx
      .update(runs)
      .set(claimSet(owner, now, leaseUntil))
      .where(inArray(runs.id, pick))
      .returning(returning) as Promise<ClaimedRun[]>;
  }

  function pickRuns(tx: Tx, where: SQL | undefined, order: SQL[], limit: number) {
    return tx
      .select({ id: runs.id })
      .from(runs)
      .where(where)
      .orderBy(...order)
      .limit(limit)
      .for("update", { skipLocked: true });
  }

  async function claimOne(
    tx: Tx,
    orgId: string,
    loops: string[],
    loopTurn: Map<string, number>,
    byLoop: Map<string, number>,
    params: { owner: string; now: number; leaseUntil: number },
    limits: ClaimLimits,
  ): Promise<ClaimedRun | null> {
    const { owner, now, leaseUntil } = params;
    while (loops.length > 0) {
      const at = (loopTurn.get(orgId) ?? 0) % loops.length;
      const loopId = loops[at] as string;
      const limit = limits.perLoop(loopId);
      let got: ClaimedRun | undefined;
      if (limit === undefined || (byLoop.get(loopId) ?? 0) < limit) {
        const pair = and(eq(runs.orgId, orgId), eq(runs.loopId, loopId));
        // A due sleeper first (it started earlier), else the oldest queued run.
        [got] = await take(
          tx,
          owner,
          now,
          leaseUntil,
          pickRuns(tx, and(eq(runs.status, "sleeping"), pair, lte(runs.wakeAt, now)), [asc(runs.wakeAt)], 1),
        );
        if (got === undefined) {
          [got] = await take(
            tx,
            owner,
            now,
            leaseUntil,
            pickRuns(
              tx,
              and(eq(runs.status, "queued"), pair, isNull(runs.wakeAt)),
              [asc(runs.createdAt), asc(runs.id)],
              1,
            ),
          );
        }
      }
      if (got === undefined) {
        loops.splice(at, 1);
        continue;
      }
      byLoop.set(loopId, (byLoop.get(loopId) ?? 0) + 1);
      loopTurn.set(orgId, at + 1);
      return got;
    }
    return null;
  }

  async function claim(owner: string, now: number, leaseUntil: number, limits: ClaimLimits): Promise<ClaimedRun[]> {
    if (limits.max <= 0) return [];
    return db.transaction(async (tx) => {
      const params = { owner, now, leaseUntil };
      const claimed = await take(
        tx,
        owner,
        now,
        leaseUntil,
        pickRuns(
          tx,
          and(eq(runs.status, "running"), lt(sql`COALESCE(${runs.leaseExpiresAt}, 0)`, now)),
          [asc(runs.leaseExpiresAt)],
          limits.max,
        ),
      );
      if (claimed.length >= limits.max) return claimed;

      // Ready (organization → its loops with ready runs), due sleepers and queued runs alike.
      // Queued pairs by a loose index scan (a recursive query seeking the next pair in the
      // runs_status_org_loop index, one seek per pair however long the queue: a plain DISTINCT read
      // every queued row, ~7 ms a pass at 5,000 queued); due sleepers through runs_status_wake.
      const pairs = await tx.execute<{ orgId: string; loopId: string }>(sql`
        WITH RECURSIVE queued AS (
          (SELECT "orgId", "loopId" FROM runs WHERE status = 'queued' ORDER BY "orgId", "loopId" LIMIT 1)
          UNION ALL
          SELECT next."orgId", next."loopId" FROM queued q, LATERAL (
            SELECT "orgId", "loopId" FROM runs
            WHERE status = 'queued' AND ("orgId", "loopId") > (q."orgId", q."loopId")
            ORDER BY "orgId", "loopId" LIMIT 1
          ) next
        )
        SELECT "orgId", "loopId" FROM queued
        UNION
        SELECT DISTINCT "orgId", "loopId" FROM runs WHERE status = 'sleeping' AND "wakeAt" <= ${now}::bigint`);
      const ready = new Map<string, string[]>();
      for (const { orgId, loopId } of pairs) ready.set(orgId, [...(ready.get(orgId) ?? []), loopId].sort());
      const orgs = [...ready.keys()].sort();
      const start = orgs.findIndex((orgId) => orgId > lastOrg);
      const turn = start === -1 ? orgs : [...orgs.slice(start), ...orgs.slice(0, start)];

      // Per organization served in this pass: its lock is held, and its running runs per loop.
      const served = new Map<string, { total: number; byLoop: Map<string, number> }>();
      const loopTurn = new Map<string, number>();
      while (turn.length > 0 && claimed.length < limits.max) {
        for (let i = 0; i < turn.length && claimed.length < limits.max; ) {
          const orgId = turn[i] as string;
          const counts = served.get(orgId) ?? (await lockAndCount(tx, orgId));
          if (counts === null) {
            // Another instance is claiming for it right now: its turn comes in the next pass.
            turn.splice(i, 1);
            continue;
          }
          served.set(orgId, counts);
          const got =
            counts.total < limits.perOrg
              ? await claimOne(tx, orgId, ready.get(orgId) ?? [], loopTurn, counts.byLoop, params, limits)
              : null;
          if (got === null) {
            turn.splice(i, 1);
            continue;
          }
          claimed.push(got);
          counts.total += 1;
          lastOrg = orgId;
          i++;
        }
      }
      return claimed;
    });
  }

  /** The organization's claim lock for this transaction, then its running runs; null when taken. */
  async function lockAndCount(tx: Tx, orgId: string) {
    const [lock] = await tx.execute<{ locked: boolean }>(
      sql`SELECT pg_try_advisory_xact_lock(${CLAIM_LOCK_SPACE}::int, hashtext(${orgId})) AS locked`,
    );
    if (lock?.locked !== true) return null;
    const rows = await tx
      .select({ loopId: runs.loopId, n: count() })
      .from(runs)
      .where(and(eq(runs.status, "running"), eq(runs.orgId, orgId)))
      .groupBy(runs.loopId);
    const byLoop = new Map(rows.map((row) => [row.loopId, row.n]));
    return { total: rows.reduce((sum, row) => sum + row.n, 0), byLoop };
  }

  function heartbeat(tx: Tx, owner: string, now: number) {
    return tx
      .insert(loopEngines)
      .values({ owner, host, pid: process.pid, startedAt: now, seenAt: now })
      .onConflictDoUpdate({ target: loopEngines.owner, set: { seenAt: now } });
  }

  /** Makes the runs of engines that are gone claimable now; how many engines were gone. */
  async function reap(tx: Tx, owner: string, now: number, leaseMs: number): Promise<number> {
    const owners = await tx
      .selectDistinct({
        owner: sql<string>`${runs.leaseOwner}`,
        host: loopEngines.host,
        pid: loopEngines.pid,
        seenAt: loopEngines.seenAt,
      })
      .from(runs)
      .leftJoin(loopEngines, eq(loopEngines.owner, runs.leaseOwner))
      .where(and(eq(runs.status, "running"), isNotNull(runs.leaseOwner), ne(runs.leaseOwner, owner)));
    let revived = 0;
    for (const row of owners) {
      if (!isEngineGone(row, now, leaseMs, host)) continue;
      await tx
        .update(runs)
        .set({ leaseExpiresAt: 0 })
        .where(and(eq(runs.leaseOwner, row.owner), eq(runs.status, "running")));
      await tx.delete(loopEngines).where(eq(loopEngines.owner, row.owner));
      revived += 1;
    }
    return revived;
  }

  return {
    claim,

    register(owner, now, leaseMs) {
      return db.transaction(async (tx) => {
        await heartbeat(tx, owner, now);
        return reap(tx, owner, now, leaseMs);
      });
    },

    async unregister(owner) {
      await db.delete(loopEngines).where(eq(loopEngines.owner, owner));
    },

    renew(owner, now, leaseUntil) {
      return db.transaction(async (tx) => {
        await heartbeat(tx, owner, now);
        // As on SQLite: a dead engine on this host frees its runs at any live engine's heartbeat.
        await reap(tx, owner, now, leaseUntil - now);
        const held = await tx
          .update(runs)
          .set({ leaseExpiresAt: leaseUntil })
          .where(and(eq(runs.leaseOwner, owner), eq(runs.status, "running")))
          .returning({ id: runs.id });
        return new Set(held.map((row) => row.id));
      });
    },

    async release(runId, owner) {
      await db
        .update(runs)
        .set({ leaseExpiresAt: 0 })
        .where(and(eq(runs.id, runId), eq(runs.leaseOwner, owner), eq(runs.status, "running")));
    },

    async nextWakeAt() {
      const [row] = await db
        .select({ wakeAt: min(runs.wakeAt) })
        .from(runs)
        .where(eq(runs.status, "sleeping"));
      return row?.wakeAt ?? null;
    },
  };
}
