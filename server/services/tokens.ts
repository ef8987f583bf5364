/**
 * API tokens of an organization: what a store of them does, whatever the database. Minted here
 * (the plaintext returned once, only its SHA-256 stored), listed, revoked, found by hash for the
 * authenticator, and their lastUsedAt written behind in batches. Implementations:
 * token-store-sqlite.ts (the server's) and token-store-postgres.ts; test/token-store.test.ts runs
 * the same suite against both. Expected failures are values; the tRPC layer turns them into errors.
 */
import { newId } from "../../core/ids.ts";
import type { Result } from "../../core/result.ts";
import { generateToken, hashToken, tokenDisplay } from "../../core/tokens.ts";
import type { apiTokens, organizations } from "../../schema/tables.ts";
import type { Actor } from "./admin-audit.ts";

export type { Actor };

/**
 * A token as the admin API and the CLI show it: its row (derived, so a column added to the table
 * is one edit) without the hash, times as ISO text, scopes parsed.
 */
export type TokenView = Pick<TokenRow, "id" | "name" | "prefix" | "lastFour" | "orgId" | "createdBy"> & {
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

/** The one time the plaintext exists outside the caller's hands. */
export type CreatedToken = TokenView & { token: string };

/** Both dialects' tables infer this same row (test/schema-dialects.test.ts). */
export type TokenRow = typeof apiTokens.$inferSelect;

/** What authentication needs of a token, with its organization's slug. */
export type TokenLookup = Pick<TokenRow, "id" | "name" | "orgId" | "scopes" | "revokedAt" | "lastUsedAt"> & {
  slug: (typeof organizations.$inferSelect)["slug"];
};

export type RevokeError = "not_found" | "already_revoked";

export interface CreateTokenInput {
  orgId: string;
  name: string;
  scopes: string[];
  actor: Actor;
}

export interface RevokeTokenInput {
  orgId: string;
  id: string;
  actor: Actor;
}

export interface TokenStore {
  /** Mints a token and records who did it (admin audit), in one transaction. */
  create(input: CreateTokenInput): Promise<CreatedToken>;
  /** The organization's tokens, revoked ones included, newest first. */
  list(orgId: string): Promise<TokenView[]>;
  /** A token of another organization is `not_found`: its existence is not revealed. */
  revoke(input: RevokeTokenInput): Promise<Result<TokenView, RevokeError>>;
  /** The token with this hex SHA-256, revoked or not (the caller refuses revoked ones), or null. */
  findByHash(hash: string): Promise<TokenLookup | null>;
  /** Writes lastUsedAt (token id → epoch ms) for a batch, never moving one back in time. */
  touch(uses: ReadonlyMap<string, number>): Promise<void>;
}

/**
 * A store that can also answer the lookup at once. SQLite can: the authenticator then keeps a
 * synchronous path, with no promise and no await on the request (docs/stack.md, Elysia).
 */
export interface SyncTokenLookup {
  findByHashSync(hash: string): TokenLookup | null;
}

export function hasSyncLookup(store: TokenStore): store is TokenStore & SyncTokenLookup {
  return typeof (store as Partial<SyncTokenLookup>).findByHashSync === "function";
}

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

/** A new token and the row that stands for it; the plaintext is never stored. */
export function mintToken(input: CreateTokenInput, now: number): { token: string; row: TokenRow } {
  const token = generateToken();
  return {
    token,
    row: {
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
    },
  };
}
