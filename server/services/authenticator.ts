/**
 * Bearer → Principal. The system key is compared as a SHA-256 digest in constant time. API
 * tokens are checked for shape and checksum before any lookup, then found by the unique index
 * on their hash (O(1) in the table size) through the token store; revocation is read on every
 * request, never cached. `lastUsedAt` is written behind, at most once a minute per token.
 *
 * With a store that answers at once (SQLite), `authenticate` is synchronous: no promise and no
 * await on every request's path, and the auth hook stays synchronous for Elysia. With one that
 * answers with promises (PostgreSQL), it returns a promise; the type says which.
 */
import { timingSafeEqual } from "node:crypto";
import type { Principal } from "../../core/authz.ts";
import type { BearerAuth } from "../../plugins/auth.ts";
import { unavailable } from "../../http/problem.ts";
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from "../db-errors.ts";
import { sha256Digest } from "../../core/hash.ts";
import { isWellFormedToken } from "../../core/tokens.ts";
import { hasSyncLookup, type SyncTokenLookup, type TokenLookup, type TokenStore } from "./tokens.ts";

export interface AuthenticatorOptions<S extends TokenStore> {
  tokens: S;
  /** Hex SHA-256 of the system key. */
  systemKeyHash: string;
  defaultOrg: { id: string; slug: string };
  now?: () => number;
}

export type Authenticate<S extends TokenStore> = S extends SyncTokenLookup
  ? (bearer: string) => Principal | null
  : (bearer: string) => Promise<Principal | null>;

const LAST_USED_RESOLUTION_MS = 60_000;
const MAX_BEARER_CHARS = 512;

export class Authenticator<S extends TokenStore> {
  readonly authenticate: Authenticate<S>;
  /** `authenticate` with its kind, for the auth plugin (plugins/auth.ts): which hooks to build. */
  readonly bearer: BearerAuth;
  /** The system key's SHA-256 digest (32 bytes), for the constant-time compare. */
  private readonly systemKeyDigest: Buffer;
  private readonly systemPrincipal: Principal;
  private readonly tokens: S;
  private readonly lastUsed = new Map<string, number>();
  private pendingTouches = new Map<string, number>();
  private readonly now: () => number;

  constructor(options: AuthenticatorOptions<S>) {
    this.tokens = options.tokens;
    this.now = options.now ?? Date.now;
    if (!/^[0-9a-f]{64}$/.test(options.systemKeyHash)) throw new Error("systemKeyHash must be a hex SHA-256");
    this.systemKeyDigest = Buffer.from(options.systemKeyHash, "hex");
    this.systemPrincipal = {
      kind: "system",
      id: "system",
      name: "system key",
      orgId: options.defaultOrg.id,
      orgSlug: options.defaultOrg.slug,
      scopes: ["cli:run"],
    };
    const tokens: TokenStore = options.tokens;
    // The conditional type cannot be narrowed by the runtime check; the two arms match it.
    this.authenticate = (
      hasSyncLookup(tokens)
        ? (bearer: string): Principal | null => {
            const screened = this.screen(bearer);
            return typeof screened === "string" ? this.admit(tokens.findByHashSync(screened)) : screened;
          }
        : async (bearer: string): Promise<Principal | null> => {
            const screened = this.screen(bearer);
            return typeof screened === "string" ? this.admit(await this.lookUp(tokens, screened)) : screened;
          }
    ) as Authenticate<S>;
    this.bearer = hasSyncLookup(tokens)
      ? { async: false, authenticate: this.authenticate as Authenticate<SyncTokenLookup & TokenStore> }
      : { async: true, authenticate: this.authenticate as (bearer: string) => Promise<Principal | null> };
  }

  /**
   * Writes the throttled lastUsedAt updates; called by the server's periodic flush. A store that
   * answers at once (SQLite) has committed them when this returns. A batch that fails is kept
   * for the next flush (a newer use of the same token wins).
   */
  flush(): Promise<void> {
    if (this.pendingTouches.size === 0) return Promise.resolve();
    const touches = this.pendingTouches;
    this.pendingTouches = new Map();
    return this.tokens.touch(touches).catch((error: unknown) => {
      for (const [id, at] of touches) {
        if (!this.pendingTouches.has(id)) this.pendingTouches.set(id, at);
      }
      throw error;
    });
  }

  /** A lookup that is a round trip: a database out of reach is a 503 with Retry-After, not a 500. */
  private async lookUp(tokens: TokenStore, hash: string): Promise<TokenLookup | null> {
    try {
      return await tokens.findByHash(hash);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      throw unavailable("The token store cannot be reached; retry shortly", DATABASE_RETRY_AFTER_SECONDS);
    }
  }

  /** The system principal, null for a bearer that cannot be a token, or the hash to look up. */
  private screen(bearer: string): Principal | null | string {
    if (bearer.length > MAX_BEARER_CHARS) return null;
    // One hash per request: the same digest is compared with the system key (as bytes) and, in
    // hex, looked up (tokens are stored by hashToken's hex digest).
    const digest = sha256Digest(bearer);
    if (timingSafeEqual(digest, this.systemKeyDigest)) return this.systemPrincipal;
    return isWellFormedToken(bearer) ? digest.toString("hex") : null;
  }

  private admit(row: TokenLookup | null): Principal | null {
    if (row === null || row.revokedAt !== null) return null;
    this.noteUse(row.id, row.lastUsedAt);
    return {
      kind: "token",
      id: row.id,
      name: row.name,
      orgId: row.orgId,
      orgSlug: row.slug,
      scopes: JSON.parse(row.scopes),
    };
  }

  private noteUse(tokenId: string, storedMs: number | null): void {
    const now = this.now();
    const known = this.lastUsed.get(tokenId) ?? storedMs ?? 0;
    if (now - known < LAST_USED_RESOLUTION_MS) return;
    this.lastUsed.set(tokenId, now);
    this.pendingTouches.set(tokenId, now);
  }
}
