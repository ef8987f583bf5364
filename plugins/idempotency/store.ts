/**
 * Idempotency-Key records in SQLite (or Redis: redis-store.ts; or PostgreSQL: store-postgres.ts), kept 24 hours (docs/interface.md §4.1 rule 6). A key is `in_flight` from the
 * first request until its response is stored; an in-flight record older than
 * `staleAfterMs` belongs to a request that died with its process, and may be taken over.
 */
import type { Database } from "bun:sqlite";
import type { idempotencyKeys } from "../../schema/tables.ts";

export type Begin =
  | { kind: "new" }
  | { kind: "replay"; status: number; body: string | undefined; headers: Record<string, string> }
  | { kind: "conflict"; reason: "in_flight" | "mismatch" };

/**
 * `shared` tells the two kinds apart: the SQLite store answers synchronously (and can join the
 * trigger's transaction); a shared store (Redis, or PostgreSQL: store-postgres.ts) answers with
 * promises, and its `complete` and `abandon` never reject (a record they fail to write goes stale
 * and is taken over).
 */
export type IdempotencyStore = LocalIdempotencyStore | SharedIdempotencyStore;

export interface LocalIdempotencyStore {
  readonly shared: false;
  begin(scope: string, key: string, requestHash: string, nowMs: number): Begin;
  /** `body` is the response as sent: JSON text, or a value to serialize. */
  complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string>): void;
  abandon(scope: string, key: string): void;
}

export interface SharedIdempotencyStore {
  readonly shared: true;
  begin(scope: string, key: string, requestHash: string, nowMs: number): Promise<Begin>;
  complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string>): Promise<void>;
  abandon(scope: string, key: string): Promise<void>;
}

/** The stored body: JSON text as it was sent, or null for none. */
export const storedBody = (body: unknown): string | null =>
  body === undefined ? null : typeof body === "string" ? body : JSON.stringify(body);

interface Row {
  requestHash: string;
  status: "in_flight" | "done";
  responseStatus: number | null;
  responseBody: string | null;
  responseHeaders: string | null;
  createdAt: number;
  expiresAt: number;
}

/**
 * What a live record (not expired) says to a request with the same key, in either dialect: another
 * request's key (409), a stored answer to replay, or a request still in flight (409); null when
 * that request has been in flight longer than `staleAfterMs` and may be taken over.
 */
export function answerFromRecord(
  row: Pick<
    typeof idempotencyKeys.$inferSelect,
    "requestHash" | "status" | "responseStatus" | "responseBody" | "responseHeaders" | "createdAt"
  >,
  requestHash: string,
  nowMs: number,
  staleAfterMs: number,
): Begin | null {
  if (row.requestHash !== requestHash) return { kind: "conflict", reason: "mismatch" };
  if (row.status === "done") {
    return {
      kind: "replay",
      status: row.responseStatus ?? 200,
      body: row.responseBody ?? undefined,
      headers: row.responseHeaders === null ? {} : JSON.parse(row.responseHeaders),
    };
  }
  return nowMs - row.createdAt < staleAfterMs ? { kind: "conflict", reason: "in_flight" } : null;
}

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export class SqliteIdempotencyStore implements LocalIdempotencyStore {
  readonly shared = false;
  private readonly select;
  private readonly upsertInFlight;
  private readonly markDone;
  private readonly remove;
  private readonly purge;
  private lastPurgeMs = 0;

  constructor(
    sqlite: Database,
    private readonly staleAfterMs = 60_000,
  ) {
    this.select = sqlite.query<Row, [string, string]>(
      "SELECT requestHash, status, responseStatus, responseBody, responseHeaders, createdAt, expiresAt FROM idempotency_keys WHERE scope = ? AND key = ?",
    );
    this.upsertInFlight = sqlite.query(
      `INSERT INTO idempotency_keys (scope, key, requestHash, status, createdAt, expiresAt)
       VALUES (?1, ?2, ?3, 'in_flight', ?4, ?5)
       ON CONFLICT (scope, key) DO UPDATE SET requestHash = excluded.requestHash, status = 'in_flight',
         responseStatus = NULL, responseBody = NULL, responseHeaders = NULL,
         createdAt = excluded.createdAt, expiresAt = excluded.expiresAt`,
    );
    this.markDone = sqlite.query(
      "UPDATE idempotency_keys SET status = 'done', responseStatus = ?3, responseBody = ?4, responseHeaders = ?5 WHERE scope = ?1 AND key = ?2",
    );
    this.remove = sqlite.query("DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND status = 'in_flight'");
    this.purge = sqlite.query("DELETE FROM idempotency_keys WHERE expiresAt < ?");
  }

  begin(scope: string, key: string, requestHash: string, nowMs: number): Begin {
    this.purgeExpired(nowMs);
    const row = this.select.get(scope, key);
    if (row && row.expiresAt > nowMs) {
      const answer = answerFromRecord(row, requestHash, nowMs, this.staleAfterMs);
      if (answer !== null) return answer;
    }
    this.upsertInFlight.run(scope, key, requestHash, nowMs, nowMs + IDEMPOTENCY_TTL_MS);
    return { kind: "new" };
  }

  complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string>): void {
    this.markDone.run(scope, key, status, storedBody(body), JSON.stringify(headers));
  }

  abandon(scope: string, key: string): void {
    this.remove.run(scope, key);
  }

  /** At most once a minute, so the hot path rarely pays for it. */
  private purgeExpired(nowMs: number): void {
    if (nowMs - this.lastPurgeMs < 60_000) return;
    this.lastPurgeMs = nowMs;
    this.purge.run(nowMs);
  }
}
