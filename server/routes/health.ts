/**
 * `GET /healthz` (liveness: the process answers, and says how its dependencies are) and
 * `GET /readyz` (readiness, for a load balancer: 200 only while the database answers and, when
 * one is configured, Redis does; 503 otherwise, so traffic goes to another instance). Neither
 * needs credentials or says anything but states and the version.
 */
import type { Database } from "bun:sqlite";
import { Elysia } from "elysia";
import type { RedisConnection } from "../../core/redis.ts";
import type { PgDb } from "../db-postgres.ts";
import { SERVER_VERSION } from "../version.ts";

/** Whether the database answers `SELECT 1`. Never rejects, and settles within its own timeout. */
export type DatabaseProbe = () => Promise<boolean>;

export interface HealthRouteDeps {
  database: DatabaseProbe;
  /** The shared Redis, when HEALTH_REDIS_URL is set. */
  redis: RedisConnection | undefined;
}

type State = "ok" | "unavailable";

/** SQLite answers at once: a prepared `SELECT 1` on the server's connection. */
export function sqliteProbe(sqlite: Database): DatabaseProbe {
  const probe = sqlite.query<{ ok: number }, []>("SELECT 1 AS ok");
  return () => {
    try {
      return Promise.resolve(probe.get()?.ok === 1);
    } catch {
      // A closed, locked-out or corrupt database file: not ready.
      return Promise.resolve(false);
    }
  };
}

export const POSTGRES_PROBE_TIMEOUT_MS = 1_000;

/**
 * PostgreSQL: `SELECT 1` through the pool, given `timeoutMs` to answer (a server that is down,
 * unreachable or has no free connection is not ready, and a probe never hangs a load balancer's
 * check). A probe still pending is shared by the checks that come while it runs, so a stuck
 * database costs one waiting query, not one per check; on its timeout the query is cancelled.
 */
export function postgresProbe(db: Pick<PgDb, "client">, timeoutMs = POSTGRES_PROBE_TIMEOUT_MS): DatabaseProbe {
  let pending: Promise<boolean> | null = null;
  function ask(): Promise<boolean> {
    const query = db.client`SELECT 1 AS ok`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => {
        // Cancelling makes the query reject; that rejection is handled below.
        query.cancel();
        resolve(false);
      }, timeoutMs);
    });
    const answered = query.then(
      (rows: Array<{ ok: number }>) => rows[0]?.ok === 1,
      () => false,
    );
    return Promise.race([answered, timedOut]).finally(() => {
      clearTimeout(timer);
      pending = null;
    });
  }
  return () => {
    pending ??= ask();
    return pending;
  };
}

export function healthRoutes(deps: HealthRouteDeps) {
  async function check() {
    const [databaseUp, redisUp] = await Promise.all([deps.database(), deps.redis?.ping()]);
    const database: State = databaseUp ? "ok" : "unavailable";
    const redis: State | "off" = redisUp === undefined ? "off" : redisUp ? "ok" : "unavailable";
    const ready = database === "ok" && redis !== "unavailable";
    return { ready, body: { status: ready ? "ok" : "degraded", version: SERVER_VERSION, database, redis } };
  }
  return new Elysia({ name: "health.health" })
    .get("/healthz", async () => (await check()).body)
    .get("/readyz", async ({ set }) => {
      const { ready, body } = await check();
      set.status = ready ? 200 : 503;
      return body;
    });
}
