/**
 * API tokens in the SQLite database: the server's store. Every method runs synchronously inside,
 * and the async ones resolve with what already happened: a write is committed when the call
 * returns, as before the store had an interface (the server's flush relies on it). The lookup on
 * every request's path also has a synchronous form, a statement prepared once.
 */
import { and, desc, eq } from "drizzle-orm";
import { err, ok, type Result } from "../../core/result.ts";
import { apiTokens } from "../../schema/tables.ts";
import type { Db } from "../db.ts";
import { writeAudit } from "./admin-audit-sqlite.ts";
import {
  type CreatedToken,
  type CreateTokenInput,
  mintToken,
  type RevokeError,
  type RevokeTokenInput,
  type SyncTokenLookup,
  type TokenLookup,
  type TokenStore,
  type TokenView,
  toTokenView,
} from "./tokens.ts";

export class SqliteTokenStore implements TokenStore, SyncTokenLookup {
  private readonly byHash;
  private readonly touchOne;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    // A correlated subquery, not a JOIN: measured at ~2 µs against ~25 µs for the JOIN
    // (SQLite 3.54 in Bun 1.4.5), on the one query every authenticated request makes.
    this.byHash = db.sqlite.query<TokenLookup, [string]>(
      `SELECT t.id, t.name, t.orgId, t.scopes, t.revokedAt, t.lastUsedAt,
              (SELECT slug FROM organizations WHERE id = t.orgId) AS slug
       FROM api_tokens t WHERE t.hash = ?`,
    );
    this.touchOne = db.sqlite.query(
      "UPDATE api_tokens SET lastUsedAt = max(coalesce(lastUsedAt, 0), ?2) WHERE id = ?1",
    );
  }

  /** `create`, returning the token itself: for start-up, tests and benchmarks that have no await. */
  createSync(input: CreateTokenInput): CreatedToken {
    const now = this.now();
    const { token, row } = mintToken(input, now);
    this.db.sqlite
      .transaction(() => {
        this.db.orm.insert(apiTokens).values(row).run();
        writeAudit(this.db, {
          orgId: input.orgId,
          actor: input.actor,
          action: "token.create",
          targetId: row.id,
          at: now,
        });
      })
      .immediate();
    return { ...toTokenView(row), token };
  }

  async create(input: CreateTokenInput): Promise<CreatedToken> {
    return this.createSync(input);
  }

  async list(orgId: string): Promise<TokenView[]> {
    return this.db.orm
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.orgId, orgId))
      .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id))
      .all()
      .map(toTokenView);
  }

  async revoke(input: RevokeTokenInput): Promise<Result<TokenView, RevokeError>> {
    const db = this.db;
    return db.sqlite
      .transaction((): Result<TokenView, RevokeError> => {
        const row = db.orm
          .select()
          .from(apiTokens)
          .where(and(eq(apiTokens.id, input.id), eq(apiTokens.orgId, input.orgId)))
          .get();
        if (row === undefined) return err("not_found");
        if (row.revokedAt !== null) return err("already_revoked");
        const now = this.now();
        db.orm
          .update(apiTokens)
          .set({ revokedAt: now, revokedBy: input.actor.id })
          .where(eq(apiTokens.id, row.id))
          .run();
        writeAudit(db, { orgId: input.orgId, actor: input.actor, action: "token.revoke", targetId: row.id, at: now });
        return ok(toTokenView({ ...row, revokedAt: now, revokedBy: input.actor.id }));
      })
      .immediate();
  }

  findByHashSync(hash: string): TokenLookup | null {
    return this.byHash.get(hash);
  }

  async findByHash(hash: string): Promise<TokenLookup | null> {
    return this.findByHashSync(hash);
  }

  async touch(uses: ReadonlyMap<string, number>): Promise<void> {
    if (uses.size === 0) return;
    this.db.sqlite
      .transaction(() => {
        for (const [id, at] of uses) this.touchOne.run(id, at);
      })
      .immediate();
  }
}
