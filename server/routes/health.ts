/**
 * `GET /healthz` (liveness: the process answers, and says how its dependencies are) and
 * `GET /readyz` (readiness, for a load balancer: 200 only while the database answers and, when
 * one is configured, Redis does; 503 otherwise, so traffic goes to another instance). Neither
 * needs credentials or says anything but states and the version.
 */
import type { Database } from "bun:sqlite";
import { Elysia } from "elysia";
import type { RedisConnection } from "../../core/redis.ts";
import { SERVER_VERSION } from "../version.ts";

export interface HealthRouteDeps {
  sqlite: Database;
  /** The shared Redis, when HEALTH_REDIS_URL is set. */
  redis: RedisConnection | undefined;
}

type State = "ok" | "unavailable";

export function healthRoutes(deps: HealthRouteDeps) {
  const probe = deps.sqlite.query<{ ok: number }, []>("SELECT 1 AS ok");
  async function check() {
    let database: State = "unavailable";
    try {
      database = probe.get()?.ok === 1 ? "ok" : "unavailable";
    } catch {
      // A closed, locked-out or corrupt database file: not ready.
    }
    const redis: State | "off" = deps.redis === undefined ? "off" : (await deps.redis.ping()) ? "ok" : "unavailable";
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
