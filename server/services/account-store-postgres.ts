/**
 * Accounts in PostgreSQL, through drizzle (server/db-postgres.ts). The same behaviour as the
 * SQLite store, checked by the same suite (test/account-store.test.ts). What differs is how
 * instances writing at once are kept apart, since their transactions interleave here: a user is
 * inserted with ON CONFLICT DO NOTHING on the unique email, so of two creations one is
 * `email_taken`; the first-admin setup locks the setup code's row, so a second setup waits for
 * the first and then finds the code used and an admin there.
 */
import { and, asc, count, eq, gt, inArray, lt, lte, sql } from "drizzle-orm";
import { newId } from "../../core/ids.ts";
import { err, ok, type Result } from "../../core/result.ts";
import { memberships, organizations, sessions, settings, users } from "../../schema/pg-tables.ts";
import type { PgDb, PgExecutor } from "../db-postgres.ts";
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
import { writeAudit } from "./admin-audit-postgres.ts";

/**
 * A session of `userId` in `orgId`, else in the user's first organization, with its audit row.
 * Run it in a transaction (`tx`): the device-link poll collects its session in its own.
 */
export async function createSessionIn(
  tx: PgExecutor,
  userId: string,
  orgId: string | undefined,
  now: number,
): Promise<CreatedSession> {
  const inOrg = orgId === undefined ? undefined : eq(memberships.orgId, orgId);
  // Ordered as SQLite reads it (its primary key, userId then orgId), for a user in several organizations.
  const [membership] = await tx
    .select({ orgId: memberships.orgId })
    .from(memberships)
    .where(and(eq(memberships.userId, userId), inOrg))
    .orderBy(asc(memberships.orgId))
    .limit(1);
  if (membership === undefined) throw new Error("user has no organization");
  const { token, row } = mintSession(userId, membership.orgId, now);
  await tx.insert(sessions).values(row);
  await writeAudit(tx, {
    orgId: membership.orgId,
    actor: { kind: "user", id: userId },
    action: "session.create",
    targetId: null,
    at: now,
  });
  return { token, expiresAt: row.expiresAt };
}

/** The user and their membership; `email_taken` (and nothing written) when the email exists. */
async function insertUser(tx: PgExecutor, user: NewUser, now: number): Promise<Result<{ id: string }, "email_taken">> {
  const id = newId("usr");
  // A concurrent insert of the same email waits on the unique index, then does nothing.
  const [inserted] = await tx
    .insert(users)
    .values({ id, email: user.email, passwordHash: user.passwordHash, createdAt: now })
    .onConflictDoNothing({ target: users.email })
    .returning({ id: users.id });
  if (inserted === undefined) return err("email_taken");
  await tx.insert(memberships).values({ userId: id, orgId: user.orgId, role: user.role, createdAt: now });
  return ok({ id });
}

async function countUsers(tx: PgExecutor): Promise<number> {
  const [row] = await tx.select({ n: count() }).from(users);
  return row?.n ?? 0;
}

export class PostgresAccountStore implements AccountStore {
  private readonly bySessionHash;

  constructor(
    private readonly db: PgDb,
    private readonly now: () => number = Date.now,
  ) {
    // Built once, as the token lookup is (token-store-postgres.ts): every admin request runs it.
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
      .prepare("health_session_by_hash");
  }

  userCount(): Promise<number> {
    return countUsers(this.db.orm);
  }

  createUser(user: NewUser): Promise<Result<{ id: string }, "email_taken">> {
    return this.db.orm.transaction((tx) => insertUser(tx, user, this.now()));
  }

  async findLogin(email: string): Promise<{ id: string; passwordHash: string } | null> {
    const [row] = await this.db.orm
      .select({ id: users.id, passwordHash: users.passwordHash })
      .from(users)
      .where(eq(users.email, email));
    return row ?? null;
  }

  createSession(userId: string, orgId?: string): Promise<CreatedSession> {
    return this.db.orm.transaction((tx) => createSessionIn(tx, userId, orgId, this.now()));
  }

  async resolveSession(hash: string): Promise<SessionUser | null> {
    const [row] = await this.bySessionHash.execute({ hash, now: this.now() });
    return row ?? null;
  }

  async deleteSession(sessionId: string): Promise<void> {
    await this.db.orm.delete(sessions).where(eq(sessions.id, sessionId));
  }

  async deleteExpiredSessions(limit: number): Promise<number> {
    const orm = this.db.orm;
    const expired = orm
      .select({ id: sessions.id })
      .from(sessions)
      .where(lt(sessions.expiresAt, this.now()))
      .limit(limit);
    const deleted = await orm.delete(sessions).where(inArray(sessions.id, expired)).returning({ id: sessions.id });
    return deleted.length;
  }

  async setSetupCode(hash: string): Promise<void> {
    const now = this.now();
    await this.db.orm
      .insert(settings)
      .values({ key: SETUP_CODE_KEY, value: hash, updatedAt: now })
      .onConflictDoUpdate({ target: settings.key, set: { value: hash, updatedAt: now } });
  }

  async offerSetupCode(hash: string, freshMs: number): Promise<boolean> {
    const now = this.now();
    const stored = await this.db.orm
      .insert(settings)
      .values({ key: SETUP_CODE_KEY, value: hash, updatedAt: now })
      .onConflictDoUpdate({
        target: settings.key,
        set: { value: hash, updatedAt: now },
        setWhere: lte(settings.updatedAt, now - freshMs),
      })
      .returning({ key: settings.key });
    return stored.length > 0;
  }

  async findSetupCode(): Promise<string | null> {
    const [row] = await this.db.orm.select().from(settings).where(eq(settings.key, SETUP_CODE_KEY));
    return row?.value ?? null;
  }

  completeSetup(code: string, user: NewUser): Promise<Result<{ id: string }, SetupError>> {
    return this.db.orm.transaction(async (tx): Promise<Result<{ id: string }, SetupError>> => {
      // The code's row, locked first: a concurrent setup waits here until this one commits, and
      // then counts the admin it created (READ COMMITTED reads afresh at each statement).
      const [stored] = await tx.select().from(settings).where(eq(settings.key, SETUP_CODE_KEY)).for("update");
      if ((await countUsers(tx)) > 0) return err("already_set_up");
      if (stored === undefined || !setupCodeMatches(stored.value, code)) return err("invalid_code");
      const created = await insertUser(tx, user, this.now());
      if (created.ok) await tx.delete(settings).where(eq(settings.key, SETUP_CODE_KEY));
      return created;
    });
  }
}
