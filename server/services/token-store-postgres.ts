/**
 * API tokens in PostgreSQL, through drizzle (server/db-postgres.ts). The same behaviour as the
 * SQLite store, checked by the same suite (test/token-store.test.ts); what differs is how
 * concurrent instances are kept apart: a revoke is one conditional UPDATE, so of two instances
 * revoking the same token exactly one succeeds and writes the audit row.
 */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { err, ok, type Result } from "../../core/result.ts";
import { apiTokens, organizations } from "../../schema/pg-tables.ts";
import type { PgDb } from "../db-postgres.ts";
import { writeAudit } from "./admin-audit-postgres.ts";
import {
  type CreatedToken,
  type CreateTokenInput,
  mintToken,
  type RevokeError,
  type RevokeTokenInput,
  type TokenLookup,
  type TokenStore,
  type TokenView,
  toTokenView,
} from "./tokens.ts";

export class PostgresTokenStore implements TokenStore {
  private readonly byHash;

  constructor(
    private readonly db: PgDb,
    private readonly now: () => number = Date.now,
  ) {
    // Built once: drizzle's query builder costs tens of µs per call (docs/stack.md), and Bun's
    // client prepares the statement on each connection the first time it runs there.
    this.byHash = db.orm
      .select({
        id: apiTokens.id,
        name: apiTokens.name,
        orgId: apiTokens.orgId,
        scopes: apiTokens.scopes,
        revokedAt: apiTokens.revokedAt,
        lastUsedAt: apiTokens.lastUsedAt,
        slug: organizations.slug,
      })
      .from(apiTokens)
      .innerJoin(organizations, eq(organizations.id, apiTokens.orgId))
      .where(eq(apiTokens.hash, sql.placeholder("hash")))
      .prepare("health_token_by_hash");
  }

  async create(input: CreateTokenInput): Promise<CreatedToken> {
    const now = this.now();
    const { token, row } = mintToken(input, now);
    await this.db.orm.transaction(async (tx) => {
      await tx.insert(apiTokens).values(row);
      await writeAudit(tx, {
        orgId: input.orgId,
        actor: input.actor,
        action: "token.create",
        targetId: row.id,
        at: now,
      });
    });
    return { ...toTokenView(row), token };
  }

  async list(orgId: string): Promise<TokenView[]> {
    const rows = await this.db.orm
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.orgId, orgId))
      .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
    return rows.map(toTokenView);
  }

  async revoke(input: RevokeTokenInput): Promise<Result<TokenView, RevokeError>> {
    return this.db.orm.transaction(async (tx): Promise<Result<TokenView, RevokeError>> => {
      const now = this.now();
      const [revoked] = await tx
        .update(apiTokens)
        .set({ revokedAt: now, revokedBy: input.actor.id })
        .where(and(eq(apiTokens.id, input.id), eq(apiTokens.orgId, input.orgId), isNull(apiTokens.revokedAt)))
        .returning();
      if (revoked === undefined) {
        const [exists] = await tx
          .select({ id: apiTokens.id })
          .from(apiTokens)
          .where(and(eq(apiTokens.id, input.id), eq(apiTokens.orgId, input.orgId)));
        return err(exists === undefined ? "not_found" : "already_revoked");
      }
      await writeAudit(tx, {
        orgId: input.orgId,
        actor: input.actor,
        action: "token.revoke",
        targetId: revoked.id,
        at: now,
      });
      return ok(toTokenView(revoked));
    });
  }

  async findByHash(hash: string): Promise<TokenLookup | null> {
    const [row] = await this.byHash.execute({ hash });
    return row ?? null;
  }

  /**
   * One statement for the batch. Ids are sorted so two instances flushing overlapping batches
   * tend to lock rows in the same order; should PostgreSQL still report a deadlock, the batch
   * fails whole and the authenticator keeps it for its next flush.
   */
  async touch(uses: ReadonlyMap<string, number>): Promise<void> {
    if (uses.size === 0) return;
    const values = [...uses]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([id, at]) => sql`(${id}, ${at}::bigint)`);
    await this.db.orm.execute(sql`
      UPDATE ${apiTokens} SET "lastUsedAt" = GREATEST(COALESCE(${apiTokens.lastUsedAt}, 0), u.at)
      FROM (VALUES ${sql.join(values, sql`, `)}) AS u(id, at)
      WHERE ${apiTokens.id} = u.id`);
  }
}
