/**
 * Who runs what: claiming runs under a lease, fairly and within limits, renewing the leases, and
 * telling live engines from dead ones when several processes share the database.
 *
 * A claim is a conditional UPDATE … RETURNING inside one write transaction (BEGIN IMMEDIATE), so
 * two engines on one file never claim the same run, and the counts the limits are checked against
 * cannot change under the pass. On a networked database the same pass becomes SELECT … FOR UPDATE
 * SKIP LOCKED on the ready rows plus a per-organization advisory lock around the count (see
 * docs/loops.md).
 *
 * Fairness: each pass serves the organizations with ready runs in turn, one run at a time, starting
 * after the one served last; inside an organization its loops take turns the same way. A burst of
 * 10,000 triggers from one organization therefore waits behind its own limit while another
 * organization's single run is claimed in the next pass.
 */
import type { Database } from "bun:sqlite";
import { hostname } from "node:os";
import type { ClaimedRun } from "./store.ts";

export interface ClaimLimits {
  /** Runs this pass may claim (the engine's free capacity). */
  max: number;
  /** Runs of one organization running at once, across every engine on the database. */
  perOrg: number;
  /** Runs of one loop running at once, across every engine, for loops that declare a limit. */
  perLoop: (loopId: string) => number | undefined;
}

const CLAIM_SET =
  "SET status = 'running', leaseOwner = $owner, leaseExpiresAt = $leaseUntil, attempts = attempts + 1, " +
  "startedAt = COALESCE(startedAt, $now), updatedAt = $now, wakeAt = NULL";
const RETURNING = "RETURNING id, orgId, loopId, input, createdAt, triggerKind, triggerId, traceparent";

type ClaimParams = { owner: string; leaseUntil: number; now: number };
type PairParams = ClaimParams & { orgId: string; loopId: string };

export type Claims = ReturnType<typeof createClaims>;

/** The operations of `Claims`, each answered with a promise: what the engine awaits, in either dialect. */
export type AsyncClaims = {
  [K in keyof Claims]: (...args: Parameters<Claims[K]>) => Promise<ReturnType<Claims[K]>>;
};

/**
 * SQLite's claims seen through promises. Each call still runs whole and synchronously (one
 * BEGIN IMMEDIATE), so nothing interleaves with it; a thrown error becomes a rejection.
 */
export function createAsyncClaims(sqlite: Database): AsyncClaims {
  const claims = createClaims(sqlite);
  return {
    claim: async (...args) => claims.claim(...args),
    register: async (...args) => claims.register(...args),
    unregister: async (...args) => claims.unregister(...args),
    renew: async (...args) => claims.renew(...args),
    release: async (...args) => claims.release(...args),
    nextWakeAt: async () => claims.nextWakeAt(),
  };
}

/**
 * True when the process that holds an engine's leases is gone: it never registered, its heartbeat
 * is older than a lease, or it ran on this host and its pid no longer exists. Both dialects' claims.
 */
export function isEngineGone(
  row: { host: string | null; pid: number | null; seenAt: number | null },
  now: number,
  leaseMs: number,
  localHost: string,
): boolean {
  if (row.seenAt === null) return true;
  if (now - row.seenAt > leaseMs) return true;
  if (row.host === localHost && row.pid !== null && row.pid !== process.pid) {
    try {
      process.kill(row.pid, 0);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ESRCH";
    }
  }
  return false;
}

export function createClaims(sqlite: Database) {
  const host = hostname();
  // Runs whose engine died mid-run (lease expired): resumed first, by replay. They already count
  // as running toward every limit.
  const claimStale = sqlite.prepare<ClaimedRun, ClaimParams>(
    `UPDATE runs ${CLAIM_SET} WHERE id = (SELECT id FROM runs WHERE status = 'running' AND COALESCE(leaseExpiresAt, 0) < $now LIMIT 1) ${RETURNING}`,
  );
  // Per (organization, loop): a due sleeper first (it started earlier), else the oldest queued run.
  // The runs_queued index yields them in (createdAt, rowid) order: first in, first out, without
  // sorting, and without reading finished runs.
  const claimDue = sqlite.prepare<ClaimedRun, PairParams>(
    `UPDATE runs ${CLAIM_SET} WHERE id = (SELECT id FROM runs WHERE status = 'sleeping' AND orgId = $orgId AND loopId = $loopId ` +
      `AND wakeAt <= $now ORDER BY wakeAt LIMIT 1) ${RETURNING}`,
  );
  const claimQueued = sqlite.prepare<ClaimedRun, PairParams>(
    `UPDATE runs ${CLAIM_SET} WHERE id = (SELECT id FROM runs WHERE status = 'queued' AND orgId = $orgId AND loopId = $loopId ` +
      `AND wakeAt IS NULL ORDER BY createdAt, rowid LIMIT 1) ${RETURNING}`,
  );
  // The (organization, loop) pairs with queued runs, by a loose index scan: one seek per distinct
  // value, however long the queue (a plain DISTINCT reads every queued row without statistics).
  const nextQueuedOrg = sqlite.prepare<{ orgId: string }, [string]>(
    "SELECT orgId FROM runs WHERE status = 'queued' AND orgId > ?1 ORDER BY orgId LIMIT 1",
  );
  const nextQueuedLoop = sqlite.prepare<{ loopId: string }, [string, string]>(
    "SELECT loopId FROM runs WHERE status = 'queued' AND orgId = ?1 AND loopId > ?2 ORDER BY loopId LIMIT 1",
  );
  const readyDue = sqlite.prepare<{ orgId: string; loopId: string }, [number]>(
    "SELECT DISTINCT orgId, loopId FROM runs INDEXED BY runs_status_wake WHERE status = 'sleeping' AND wakeAt <= ?1",
  );
  const runningCounts = sqlite.prepare<{ orgId: string; loopId: string; n: number }, []>(
    "SELECT orgId, loopId, COUNT(*) AS n FROM runs WHERE status = 'running' GROUP BY orgId, loopId",
  );
  const renew = sqlite.prepare<{ id: string }, { owner: string; leaseUntil: number }>(
    "UPDATE runs SET leaseExpiresAt = $leaseUntil WHERE leaseOwner = $owner AND status = 'running' RETURNING id",
  );
  const expireLease = sqlite.prepare<void, { runId: string; owner: string }>(
    "UPDATE runs SET leaseExpiresAt = 0 WHERE id = $runId AND leaseOwner = $owner AND status = 'running'",
  );
  const selectNextWake = sqlite.prepare<{ wakeAt: number | null }, []>(
    "SELECT MIN(wakeAt) AS wakeAt FROM runs WHERE status = 'sleeping'",
  );
  const upsertEngine = sqlite.prepare<void, { owner: string; host: string; pid: number; now: number }>(
    "INSERT INTO loop_engines (owner, host, pid, startedAt, seenAt) VALUES ($owner, $host, $pid, $now, $now) " +
      "ON CONFLICT (owner) DO UPDATE SET seenAt = excluded.seenAt",
  );
  const deleteEngine = sqlite.prepare<void, [string]>("DELETE FROM loop_engines WHERE owner = ?1");
  const foreignOwners = sqlite.prepare<
    { owner: string; host: string | null; pid: number | null; seenAt: number | null },
    [string]
  >(
    "SELECT DISTINCT r.leaseOwner AS owner, e.host, e.pid, e.seenAt FROM runs r LEFT JOIN loop_engines e ON e.owner = r.leaseOwner " +
      "WHERE r.status = 'running' AND r.leaseOwner IS NOT NULL AND r.leaseOwner != ?1",
  );
  const expireOwner = sqlite.prepare<void, [string]>(
    "UPDATE runs SET leaseExpiresAt = 0 WHERE leaseOwner = ?1 AND status = 'running'",
  );
  const forgetEngine = sqlite.prepare<void, [string]>("DELETE FROM loop_engines WHERE owner = ?1");

  function readyQueued(): Array<{ orgId: string; loopId: string }> {
    const pairs: Array<{ orgId: string; loopId: string }> = [];
    for (let org = nextQueuedOrg.get(""); org !== null; org = nextQueuedOrg.get(org.orgId)) {
      for (
        let loop = nextQueuedLoop.get(org.orgId, "");
        loop !== null;
        loop = nextQueuedLoop.get(org.orgId, loop.loopId)
      ) {
        pairs.push({ orgId: org.orgId, loopId: loop.loopId });
      }
    }
    return pairs;
  }

  /** The organization served last, so the next pass starts after it. */
  let lastOrg = "";

  /** bun:sqlite's transaction, taking the write lock at BEGIN (IMMEDIATE): counts cannot change under it. */
  const transaction = <T>(work: () => T): T => sqlite.transaction(work).immediate();

  function claim(owner: string, now: number, leaseUntil: number, limits: ClaimLimits): ClaimedRun[] {
    if (limits.max <= 0) return [];
    return transaction(() => {
      const params = { owner, now, leaseUntil };
      const claimed: ClaimedRun[] = [];
      for (let stale = claimStale.get(params); stale !== null; stale = claimStale.get(params)) {
        claimed.push(stale);
        if (claimed.length >= limits.max) return claimed;
      }

      const byOrg = new Map<string, number>();
      const byLoop = new Map<string, number>();
      for (const { orgId, loopId, n } of runningCounts.all()) {
        byOrg.set(orgId, (byOrg.get(orgId) ?? 0) + n);
        byLoop.set(`${orgId}\u0000${loopId}`, n);
      }
      // Ready (organization → its loops with ready runs), due sleepers and queued runs alike.
      const ready = new Map<string, string[]>();
      for (const { orgId, loopId } of [...readyDue.all(now), ...readyQueued()]) {
        const loops = ready.get(orgId) ?? [];
        if (!loops.includes(loopId)) loops.push(loopId);
        ready.set(orgId, loops);
      }
      const orgs = [...ready.keys()].sort();
      const start = orgs.findIndex((orgId) => orgId > lastOrg);
      const turn = start === -1 ? orgs : [...orgs.slice(start), ...orgs.slice(0, start)];
      const loopTurn = new Map<string, number>();

      while (turn.length > 0 && claimed.length < limits.max) {
        for (let i = 0; i < turn.length && claimed.length < limits.max; ) {
          const orgId = turn[i] as string;
          const loops = ready.get(orgId) ?? [];
          const got =
            (byOrg.get(orgId) ?? 0) < limits.perOrg ? claimOne(orgId, loops, loopTurn, byLoop, params, limits) : null;
          if (got === null) {
            // Nothing more for this organization in this pass: at its limit, or out of ready runs.
            turn.splice(i, 1);
            continue;
          }
          claimed.push(got);
          byOrg.set(orgId, (byOrg.get(orgId) ?? 0) + 1);
          lastOrg = orgId;
          i++;
        }
      }
      return claimed;
    });
  }

  /** One run of `orgId`, its loops taking turns; loops at their limit or empty drop out. */
  function claimOne(
    orgId: string,
    loops: string[],
    loopTurn: Map<string, number>,
    byLoop: Map<string, number>,
    params: ClaimParams,
    limits: ClaimLimits,
  ): ClaimedRun | null {
    while (loops.length > 0) {
      const at = (loopTurn.get(orgId) ?? 0) % loops.length;
      const loopId = loops[at] as string;
      const key = `${orgId}\u0000${loopId}`;
      const limit = limits.perLoop(loopId);
      const got =
        limit !== undefined && (byLoop.get(key) ?? 0) >= limit
          ? null
          : (claimDue.get({ ...params, orgId, loopId }) ?? claimQueued.get({ ...params, orgId, loopId }));
      if (got === null) {
        loops.splice(at, 1);
        continue;
      }
      byLoop.set(key, (byLoop.get(key) ?? 0) + 1);
      loopTurn.set(orgId, at + 1);
      return got;
    }
    return null;
  }

  /** Makes the runs of engines that are gone claimable now; how many engines were gone. */
  function reap(owner: string, now: number, leaseMs: number): number {
    let revived = 0;
    for (const row of foreignOwners.all(owner)) {
      if (!isEngineGone(row, now, leaseMs, host)) continue;
      expireOwner.run(row.owner);
      forgetEngine.run(row.owner);
      revived += 1;
    }
    return revived;
  }

  return {
    claim,

    /**
     * Registers this engine, and makes the runs of engines that are gone claimable at once rather
     * than after their lease: an engine that stopped heartbeating, or a process on this host that
     * no longer exists (a restart after a crash). Live engines keep their runs.
     */
    register(owner: string, now: number, leaseMs: number): number {
      return transaction(() => {
        upsertEngine.run({ owner, host, pid: process.pid, now });
        return reap(owner, now, leaseMs);
      });
    },

    unregister(owner: string): void {
      deleteEngine.run(owner);
    },

    /**
     * One heartbeat: extends every lease this engine holds and says it is alive. Returns the runs
     * still held, so the engine can tell which of its runs were terminated or taken over.
     */
    renew(owner: string, now: number, leaseUntil: number): Set<string> {
      return transaction(() => {
        upsertEngine.run({ owner, host, pid: process.pid, now });
        // A process on this host that died (kill -9, the OOM killer) frees its runs at the next
        // heartbeat of any live engine, not only when one restarts or its leases run out.
        reap(owner, now, leaseUntil - now);
        return new Set(renew.all({ owner, leaseUntil }).map((row) => row.id));
      });
    },

    /** Gives up a lease this engine holds but no longer executes: another engine may take the run. */
    release(runId: string, owner: string): void {
      expireLease.run({ runId, owner });
    },

    nextWakeAt(): number | null {
      return selectNextWake.get()?.wakeAt ?? null;
    },
  };
}
