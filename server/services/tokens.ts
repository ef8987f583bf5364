/**
 * API token management for one organization: mint (the plaintext returned once), list,
 * revoke. Expected failures are values; the tRPC layer turns them into errors.
 */
import { and, desc, eq } from "drizzle-orm";
import { newId } from "../../core/ids.ts";
import { err, ok, type Result } from "../../core/result.ts";
import { generateToken, hashToken, tokenDisplay } from "../../core/tokens.ts";
import { adminAudit, apiTokens } from "../../schema/tables.ts";
import type { Db } from "../db.ts";

export interface Actor {
  kind: (typeof adminAudit.$inferSelect)["actorKind"];
  id: string;
}

export interface TokenView {
  id: string;
  name: string;
  prefix: string;
  lastFour: string;
  scopes: string[];
  orgId: string;
  createdBy: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

type TokenRow = typeof apiTokens.$inferSelect;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function toTokenView(row: TokenRow): TokenView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    lastFour: row.lastFour,
    scopes: JSON.parse(row.scopes),
    orgId: row.orgId,
    createdBy: row.createdBy,
    createdAt: new Date(row.createdAt).toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
    revokedAt: iso(row.revokedAt),
  };
}

export function createToken(
  db: Db,
  input: { orgId: string; name: string; scopes: string[]; actor: Actor },
): TokenView & { token: string } {
  const token = generateToken();
  const now = Date.now();
  const row: TokenRow = {
    id: newId("tok"),
    orgId: input.orgId,
    name: input.name,
    ...tokenDisplay(token),
    hash: hashToken(token),
    scopes: JSON.stringify([...new Set(input.scopes)]),
    createdBy: input.actor.id,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
    revokedBy: null,
  };
  db.sqlite.transaction(() => {
    db.orm.insert(apiTokens).values(row).run();
    audit(db, input.orgId, input.actor, "token.create", row.id, now);
  })();
  return { ...toTokenView(row), token };
}

export function listTokens(db: Db, orgId: string): TokenView[] {
  return db.orm
    .select()
    .from(apiTokens)
    .where(eq(apiTokens.orgId, orgId))
    .orderBy(desc(apiTokens.createdAt))
    .all()
    .map(toTokenView);
}

export type RevokeError = "not_found" | "already_revoked";

/** A token of another organization is `not_found`: its existence is not revealed. */
export function revokeToken(
  db: Db,
  input: { orgId: string; id: string; actor: Actor },
): Result<TokenView, RevokeError> {
  return db.sqlite.transaction((): Result<TokenView, RevokeError> => {
    const row = db.orm
      .select()
      .from(apiTokens)
      .where(and(eq(apiTokens.id, input.id), eq(apiTokens.orgId, input.orgId)))
      .get();
    if (row === undefined) return err("not_found");
    if (row.revokedAt !== null) return err("already_revoked");
    const now = Date.now();
    db.orm.update(apiTokens).set({ revokedAt: now, revokedBy: input.actor.id }).where(eq(apiTokens.id, row.id)).run();
    audit(db, input.orgId, input.actor, "token.revoke", row.id, now);
    return ok(toTokenView({ ...row, revokedAt: now, revokedBy: input.actor.id }));
  })();
}

export function audit(
  db: Db,
  orgId: string,
  actor: Actor,
  action: string,
  targetId: string | null,
  at = Date.now(),
): void {
  db.orm.insert(adminAudit).values({ orgId, actorKind: actor.kind, actorId: actor.id, action, targetId, at }).run();
}
