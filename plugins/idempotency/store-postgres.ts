/**
 * Idempotency-Key records in PostgreSQL: the same records and answers as the SQLite store
 * (store.ts), answered with promises, so the plugin treats it as a shared store. The trigger route
 * marks a key done in the run's own transaction (server/routes/triggers.ts).
 *
 * Reserving a key is one statement, `INSERT … ON CONFLICT DO UPDATE … WHERE` (the existing record
 * expired, or is a stale in-flight one of the same request) `RETURNING`: of two requests with one
 * key at once, exactly one reserves it; the other reads the record and is refused or replayed.
 * Reading then writing, as SQLite may, would let both through under READ COMMITTED.
 */
import { and, eq, lt, sql } from "drizzle-orm";
import { idempotencyKeys } from "../../schema/pg-tables.ts";
import type { PgOrm } from "../../server/db-postgres.ts";
import { type Begin, IDEMPOTENCY_TTL_MS, type SharedIdempotencyStore, storedBody } from "./store.ts";

export class PostgresIdempotencyStore implements SharedIdempotencyStore {
  readonly shared = true;
  private lastPurgeMs = 0;

  constructor(
    private readonly orm: PgOrm,
    private readonly staleAfterMs = 60_000,
  ) {}

  async begin(scope: string, key: string, requestHash: string, nowMs: number): Promise<Begin> {
    await this.purgeExpired(nowMs);
    const t = idempotencyKeys;
    for (let tries = 0; tries < 3; tries++) {
      const reserved = await this.orm
        .insert(t)
        .values({
          scope,
          key,
          requestHash,
          status: "in_flight",
          createdAt: nowMs,
          expiresAt: nowMs + IDEMPOTENCY_TTL_MS,
        })
        .onConflictDoUpdate({
          target: [t.scope, t.key],
          set: {
            requestHash,
            status: "in_flight",
            responseStatus: null,
            responseBody: null,
            responseHeaders: null,
            createdAt: nowMs,
            expiresAt: nowMs + IDEMPOTENCY_TTL_MS,
          },
          setWhere: sql`${t.expiresAt} <= ${nowMs} OR (${t.status} = 'in_flight' AND ${t.requestHash} = ${requestHash} AND ${t.createdAt} <= ${nowMs - this.staleAfterMs})`,
        })
        .returning({ key: t.key });
      if (reserved.length > 0) return { kind: "new" };
      const [row] = await this.orm
        .select()
        .from(t)
        .where(and(eq(t.scope, scope), eq(t.key, key)));
      // Gone between the two statements (abandoned): try to reserve it again.
      if (row === undefined) continue;
      if (row.requestHash !== requestHash) return { kind: "conflict", reason: "mismatch" };
      if (row.status === "done") {
        return {
          kind: "replay",
          status: row.responseStatus ?? 200,
          body: row.responseBody ?? undefined,
          headers: row.responseHeaders === null ? {} : JSON.parse(row.responseHeaders),
        };
      }
      return { kind: "conflict", reason: "in_flight" };
    }
    return { kind: "conflict", reason: "in_flight" };
  }

  async complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string>) {
    const t = idempotencyKeys;
    try {
      await this.orm
        .update(t)
        .set({
          status: "done",
          responseStatus: status,
          responseBody: storedBody(body),
          responseHeaders: JSON.stringify(headers),
        })
        .where(and(eq(t.scope, scope), eq(t.key, key)));
    } catch {
      // Never rejects (SharedIdempotencyStore): the record stays in flight, goes stale, and is taken over.
    }
  }

  async abandon(scope: string, key: string) {
    const t = idempotencyKeys;
    try {
      await this.orm.delete(t).where(and(eq(t.scope, scope), eq(t.key, key), eq(t.status, "in_flight")));
    } catch {
      // As above: a record left in flight goes stale.
    }
  }

  /** At most once a minute, so the hot path rarely pays for it. */
  private async purgeExpired(nowMs: number): Promise<void> {
    if (nowMs - this.lastPurgeMs < 60_000) return;
    this.lastPurgeMs = nowMs;
    await this.orm.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, nowMs));
  }
}
