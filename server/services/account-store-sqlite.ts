/**
 * Accounts in the SQLite database: the server's store. The statements are those the server ran
 * before the store had an interface; every method runs synchronously inside, and the async ones
 * resolve with what already happened. A transaction here is never interleaved with another call,
 * which is what makes each check-then-write atomic. The session lookup every console and CLI
 * admin request makes is a statement prepared once.
 */
import { and, eq, gt, lte, sql } from "drizzle-orm";
import { newId } from "../../core/ids.ts";
import { err, ok, type Result } from "../../core/result.ts";
import { memberships, organizations, sessions, settings, users } from "../../schema/tables.ts";
import type { Db } from "../db.ts";
import {
  type AccountStore,
  type CreatedSession,
  mintSession,
  type NewUser,
  type SessionUser,
  SETUP_CODE_KEY,
  type SetupError,
  setupCodeMatches,
} from "./accounts.ts";
import { writeAudit } from "./admin-audit-sqlite.ts";

/**
 * A session of `userId` in `orgId`, else in the user's organization, with its audit row; in the
 * caller's transaction when there is one (a device-link poll collects its session this way).
 */
export function createSessionIn(db: Db, userId: string, orgId: string | undefined, now: number): CreatedSession {
  return db.sqlite
    .transaction((): CreatedSession => {
      const inOrg = orgId === undefined ? undefined : eq(memberships.orgId, orgId);
      const membership = db.orm
        .select()
        .from(memberships)
        .where(and(eq(memberships.userId, userId), inOrg))
        .get();
      if (!membership) throw new Error("user has no organization");
      const { token, row } = mintSession(userId, membership.orgId, now);
      db.orm.insert(sessions).values(row).run();
      writeAudit(db, {
        orgId: membership.orgId,
        actor: { kind: "user", id: userId },
        action: "session.create",
        targetId: null,
        at: now,
      });
      return { token, expiresAt: row.expiresAt };
    })
    .immediate();
}

export class SqliteAccountStore implements AccountStore {
  private readonly bySessionHash;
  private readonly deleteExpired;

  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {
    // The query the server built on every request, now prepared once: building it cost ~60 µs.
    this.bySessionHash = db.orm
      .select({
        sessionId: sessions.id,
        userId: users.id,
        email: users.email,
        orgId: organizations.id,
        orgSlug: organizations.slug,
        orgName: organizations.name,
        role: memberships.role,
        expiresAt: sessions.expiresAt,
      })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .innerJoin(organizations, eq(organizations.id, sessions.orgId))
      .innerJoin(memberships, and(eq(memberships.userId, sessions.userId), eq(memberships.orgId, sessions.orgId)))
      .where(and(eq(sessions.hash, sql.placeholder("hash")), gt(sessions.expiresAt, sql.placeholder("now"))))
      .prepare();
    // Retention's statement (server/services/retention.ts): batches by rowid, no index needed on a small table.
    this.deleteExpired = db.sqlite.prepare<void, [number, number]>(
      "DELETE FROM sessions WHERE rowid IN (SELECT rowid FROM sessions WHERE expiresAt < ?1 LIMIT ?2)",
    );
  }

  private userCountSync(): number {
    return this.db.orm.select({ n: sql<number>`count(*)` }).from(users).get()?.n ?? 0;
  }

  async userCount(): Promise<number> {
    return this.userCountSync();
  }

  private createUserSync(user: NewUser): Result<{ id: string }, "email_taken"> {
    const db = this.db;
    return db.sqlite
      .transaction((): Result<{ id: string }, "email_taken"> => {
        if (db.orm.select({ id: users.id }).from(users).where(eq(users.email, user.email)).get()) {
          return err("email_taken");
        }
        const now = this.now();
        const id = newId("usr");
        db.orm.insert(users).values({ id, email: user.email, passwordHash: user.passwordHash, createdAt: now }).run();
        db.orm.insert(memberships).values({ userId: id, orgId: user.orgId, role: user.role, createdAt: now }).run();
        return ok({ id });
      })
      .immediate();
  }

  async createUser(user: NewUser): Promise<Result<{ id: string }, "email_taken">> {
    return this.createUserSync(user);
  }

  async findLogin(email: string): Promise<{ id: string; passwordHash: string } | null> {
    const row = this.db.orm
      .select({ id: users.id, passwordHash: users.passwordHash })
      .from(users)
      .where(eq(users.email, email))
      .get();
    return row ?? null;
  }

  async createSession(userId: string, orgId?: string): Promise<CreatedSession> {
    return createSessionIn(this.db, userId, orgId, this.now());
  }

  async resolveSession(hash: string): Promise<SessionUser | null> {
    return this.bySessionHash.get({ hash, now: this.now() }) ?? null;
  }

  async deleteSession(sessionId: string): Promise<void> {
    this.db.orm.delete(sessions).where(eq(sessions.id, sessionId)).run();
  }

  async deleteExpiredSessions(limit: number): Promise<number> {
    return Number(this.deleteExpired.run(this.now(), limit).changes);
  }

  async setSetupCode(hash: string): Promise<void> {
    const now = this.now();
    this.db.orm
      .insert(settings)
      .values({ key: SETUP_CODE_KEY, value: hash, updatedAt: now })
      .onConflictDoUpdate({ target: settings.key, set: { value: hash, updatedAt: now } })
      .run();
  }

  private findSetupCodeSync(): string | null {
    return this.db.orm.select().from(settings).where(eq(settings.key, SETUP_CODE_KEY)).get()?.value ?? null;
  }

  async offerSetupCode(hash: string, freshMs: number): Promise<boolean> {
    const now = this.now();
    const stored = this.db.orm
      .insert(settings)
      .values({ key: SETUP_CODE_KEY, value: hash, updatedAt: now })
      .onConflictDoUpdate({
        target: settings.key,
        set: { value: hash, updatedAt: now },
        setWhere: lte(settings.updatedAt, now - freshMs),
      })
      .returning({ key: settings.key })
      .all();
    return stored.length > 0;
  }

  async findSetupCode(): Promise<string | null> {
    return this.findSetupCodeSync();
  }

  async completeSetup(code: string, user: NewUser): Promise<Result<{ id: string }, SetupError>> {
    const db = this.db;
    return db.sqlite
      .transaction((): Result<{ id: string }, SetupError> => {
        if (this.userCountSync() > 0) return err("already_set_up");
        const stored = this.findSetupCodeSync();
        if (stored === null || !setupCodeMatches(stored, code)) return err("invalid_code");
        const created = this.createUserSync(user);
        if (created.ok) db.orm.delete(settings).where(eq(settings.key, SETUP_CODE_KEY)).run();
        return created;
      })
      .immediate();
  }
}
