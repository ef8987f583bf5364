/**
 * Planning Idempotency-Keys in PostgreSQL (the SQLite store and the semantics: store.ts): the same
 * table and rows, the same replay, 409s, takeover of a stale in-flight record and 24-hour expiry.
 * What differs is that instances share it: a claim is one `INSERT … ON CONFLICT DO UPDATE … WHERE`
 * that writes the in-flight record only where there is none, or where the one there has expired or
 * is a stale in-flight record of the same request, and says by `RETURNING` whether it did. Of
 * several instances claiming one key at once exactly one gets `new`; the others read the record
 * the winner wrote and answer 409 (or replay). Answers with promises, so the plugin's hooks are
 * async; `complete` and `abandon` never reject (a record they fail to write goes stale and is
 * taken over), like the Redis store's.
 */
import { and, eq, lt, or, sql } from "drizzle-orm";
import { idempotencyKeys } from "../../schema/pg-tables.ts";
import type { PgDb } from "../../server/db-postgres.ts";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "../../server/db-errors.ts";
import { unavailable } from "../../http/problem.ts";
import { answerFromRecord, type Begin, IDEMPOTENCY_TTL_MS, type SharedIdempotencyStore, storedBody } from "./store.ts";

const CLAIM_ATTEMPTS = 3;

export class PostgresIdempotencyStore implements SharedIdempotencyStore {
  readonly shared = true;
  private readonly claim;
  private readonly select;
  private readonly markDone;
  private readonly remove;
  private lastPurgeMs = 0;

  constructor(
    private readonly db: PgDb,
    private readonly staleAfterMs = 60_000,
    /** Told of writes that failed (complete, abandon, the purge); they are not retried. */
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    const k = idempotencyKeys;
    const now = sql.placeholder("now");
    // Statements built once: drizzle's builder costs tens of µs per call (docs/stack.md).
    this.claim = db.orm
      .insert(k)
      .values({
        scope: sql.placeholder("scope"),
        key: sql.placeholder("key"),
        requestHash: sql.placeholder("requestHash"),
        status: "in_flight",
        createdAt: now,
        expiresAt: sql.placeholder("expiresAt"),
      })
      .onConflictDoUpdate({
        target: [k.scope, k.key],
        set: {
          requestHash: sql`excluded.${sql.identifier("requestHash")}`,
          status: "in_flight",
          responseStatus: null,
          responseBody: null,
          responseHeaders: null,
          createdAt: sql`excluded.${sql.identifier("createdAt")}`,
          expiresAt: sql`excluded.${sql.identifier("expiresAt")}`,
        },
        // Taken only when expired, or in flight for the same request longer than staleAfterMs.
        setWhere: or(
          sql`${k.expiresAt} <= ${now}`,
          and(
            eq(k.status, "in_flight"),
            sql`${k.requestHash} = excluded.${sql.identifier("requestHash")}`,
            sql`${k.createdAt} <= ${sql.placeholder("staleBefore")}`,
          ),
        ),
      })
      .returning({ scope: k.scope })
      .prepare("health_idempotency_claim");
    this.select = db.orm
      .select({
        requestHash: k.requestHash,
        status: k.status,
        responseStatus: k.responseStatus,
        responseBody: k.responseBody,
        responseHeaders: k.responseHeaders,
        createdAt: k.createdAt,
        expiresAt: k.expiresAt,
      })
      .from(k)
      .where(and(eq(k.scope, sql.placeholder("scope")), eq(k.key, sql.placeholder("key"))))
      .prepare("health_idempotency_select");
    this.markDone = db.orm
      .update(k)
      .set({
        status: "done",
        responseStatus: sql`${sql.placeholder("status")}::int`,
        responseBody: sql`${sql.placeholder("body")}`,
        responseHeaders: sql`${sql.placeholder("headers")}`,
      })
      .where(and(eq(k.scope, sql.placeholder("scope")), eq(k.key, sql.placeholder("key"))))
      .prepare("health_idempotency_done");
    this.remove = db.orm
      .delete(k)
      .where(and(eq(k.scope, sql.placeholder("scope")), eq(k.key, sql.placeholder("key")), eq(k.status, "in_flight")))
      .prepare("health_idempotency_abandon");
  }

  /**
   * A database out of reach refuses the request, 503 with Retry-After, rather than risk running a
   * repeat twice (as the Redis store's outage does).
   */
  async begin(scope: string, key: string, requestHash: string, nowMs: number): Promise<Begin> {
    try {
      return await this.claimOrRead(scope, key, requestHash, nowMs);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      throw unavailable("Idempotency-Keys cannot be checked right now; retry shortly", DATABASE_RETRY_AFTER_SECONDS);
    }
  }

  private async claimOrRead(scope: string, key: string, requestHash: string, nowMs: number): Promise<Begin> {
    this.purgeExpired(nowMs);
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const claimed = await this.claim.execute({
        scope,
        key,
        requestHash,
        now: nowMs,
        expiresAt: nowMs + IDEMPOTENCY_TTL_MS,
        staleBefore: nowMs - this.staleAfterMs,
      });
      if (claimed.length > 0) return { kind: "new" };
      const [row] = await this.select.execute({ scope, key });
      // Abandoned, expired or gone stale since the claim looked: claim again.
      if (row === undefined || row.expiresAt <= nowMs) continue;
      const answer = answerFromRecord(row, requestHash, nowMs, this.staleAfterMs);
      if (answer !== null) return answer;
    }
    // The record kept changing under us: another request is working on this key.
    return { kind: "conflict", reason: "in_flight" };
  }

  async complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string>) {
    try {
      await this.markDone.execute({ scope, key, status, body: storedBody(body), headers: JSON.stringify(headers) });
    } catch (error) {
      this.onError(error);
    }
  }

  async abandon(scope: string, key: string) {
    try {
      await this.remove.execute({ scope, key });
    } catch (error) {
      this.onError(error);
    }
  }

  /** At most once a minute, off the request's path: a request never waits for it. */
  private purgeExpired(nowMs: number): void {
    if (nowMs - this.lastPurgeMs < 60_000) return;
    this.lastPurgeMs = nowMs;
    this.db.orm
      .delete(idempotencyKeys)
      .where(lt(idempotencyKeys.expiresAt, nowMs))
      .then(
        () => {},
        (error: unknown) => this.onError(error),
      );
  }
}
