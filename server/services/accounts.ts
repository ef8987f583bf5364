/**
 * Admins: users with an argon2id password hash (Bun.password), a role per organization, and
 * sessions whose secret is stored only as a SHA-256 hash. Sign-in never tells whether the
 * email exists, and failures are rate-limited per email and per client address.
 */
import { and, eq, gt, sql } from "drizzle-orm";
import { timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../../core/hash.ts";
import { newId, randomBase62 } from "../../core/ids.ts";
import { err, ok, type Result } from "../../core/result.ts";
import { memberships, organizations, sessions, settings, users } from "../../schema/tables.ts";
import type { Db } from "../db.ts";
import { writeAudit } from "./admin-audit-sqlite.ts";
import { type EventWindow, SlidingWindow } from "./sliding-window.ts";

export const SESSION_PREFIX = "hss_";
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export type Role = (typeof memberships.$inferSelect)["role"];

export interface SessionUser {
  sessionId: string;
  userId: string;
  email: string;
  orgId: string;
  orgSlug: string;
  orgName: string;
  role: Role;
  expiresAt: number;
}

const normalizeEmail = (email: string) => email.trim().toLowerCase();

// Verified when the email is unknown, so a miss costs as long as a wrong password.
const DUMMY_HASH = await Bun.password.hash("health-dummy-password-for-timing", { algorithm: "argon2id" });

export async function createUser(
  db: Db,
  input: { email: string; password: string; orgId: string; role: Role },
): Promise<Result<{ id: string }, "email_taken">> {
  const email = normalizeEmail(input.email);
  const passwordHash = await Bun.password.hash(input.password, { algorithm: "argon2id" });
  const now = Date.now();
  return db.sqlite.transaction((): Result<{ id: string }, "email_taken"> => {
    if (db.orm.select({ id: users.id }).from(users).where(eq(users.email, email)).get()) return err("email_taken");
    const id = newId("usr");
    db.orm.insert(users).values({ id, email, passwordHash, createdAt: now }).run();
    db.orm.insert(memberships).values({ userId: id, orgId: input.orgId, role: input.role, createdAt: now }).run();
    return ok({ id });
  })();
}

export const userCount = (db: Db): number => db.orm.select({ n: sql<number>`count(*)` }).from(users).get()?.n ?? 0;

/** Checks a password; the same answer and about the same time whether or not the email exists. */
export async function verifyPassword(db: Db, emailInput: string, password: string): Promise<string | null> {
  const user = db.orm
    .select()
    .from(users)
    .where(eq(users.email, normalizeEmail(emailInput)))
    .get();
  const valid = await Bun.password.verify(password, user?.passwordHash ?? DUMMY_HASH);
  return valid && user ? user.id : null;
}

/** A session in `orgId` (a device-link approval names it), else in the user's organization. */
export function createSession(db: Db, userId: string, orgId?: string): { token: string; expiresAt: number } {
  const inOrg = orgId === undefined ? undefined : eq(memberships.orgId, orgId);
  const membership = db.orm
    .select()
    .from(memberships)
    .where(and(eq(memberships.userId, userId), inOrg))
    .get();
  if (!membership) throw new Error("user has no organization");
  const token = `${SESSION_PREFIX}${randomBase62(40)}`;
  const now = Date.now();
  const expiresAt = now + SESSION_TTL_MS;
  db.orm
    .insert(sessions)
    .values({ id: newId("ses"), hash: sha256Hex(token), userId, orgId: membership.orgId, createdAt: now, expiresAt })
    .run();
  writeAudit(db, {
    orgId: membership.orgId,
    actor: { kind: "user", id: userId },
    action: "session.create",
    targetId: null,
    at: now,
  });
  return { token, expiresAt };
}

export function resolveSession(db: Db, token: string): SessionUser | null {
  if (!token.startsWith(SESSION_PREFIX) || token.length > 128) return null;
  const row = db.orm
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
    .where(and(eq(sessions.hash, sha256Hex(token)), gt(sessions.expiresAt, Date.now())))
    .get();
  return row ?? null;
}

export function deleteSession(db: Db, sessionId: string): void {
  db.orm.delete(sessions).where(eq(sessions.id, sessionId)).run();
}

/**
 * First admin: from HEALTH_ADMIN_EMAIL/PASSWORD, or with neither, a one-time setup code whose
 * hash is stored and whose plaintext is returned to print. No default password, ever.
 */
export async function bootstrapAdmin(
  db: Db,
  orgId: string,
  admin: { email: string; password: string } | undefined,
): Promise<{ setupCode?: string; createdAdmin?: string }> {
  if (userCount(db) > 0) return {};
  if (admin) {
    await createUser(db, { ...admin, orgId, role: "owner" });
    return { createdAdmin: normalizeEmail(admin.email) };
  }
  const code = randomBase62(24);
  db.orm
    .insert(settings)
    .values({ key: "setup_code_hash", value: sha256Hex(code), updatedAt: Date.now() })
    .onConflictDoUpdate({ target: settings.key, set: { value: sha256Hex(code), updatedAt: Date.now() } })
    .run();
  return { setupCode: code };
}

export type SetupError = "already_set_up" | "invalid_code" | "email_taken";

export async function completeSetup(
  db: Db,
  orgId: string,
  input: { code: string; email: string; password: string },
): Promise<Result<{ id: string }, SetupError>> {
  if (userCount(db) > 0) return err("already_set_up");
  const stored = db.orm.select().from(settings).where(eq(settings.key, "setup_code_hash")).get();
  const given = Buffer.from(sha256Hex(input.code), "hex");
  if (!stored || !timingSafeEqual(given, Buffer.from(stored.value, "hex"))) return err("invalid_code");
  const created = await createUser(db, { email: input.email, password: input.password, orgId, role: "owner" });
  if (created.ok) db.orm.delete(settings).where(eq(settings.key, "setup_code_hash")).run();
  return created;
}

/** Sign-in is blocked after this many failures of an email or a client address in the window. */
export const LOGIN_FAILURES = { max: 5, windowMs: 15 * 60 * 1000 } as const;

/**
 * Failed sign-ins per key (email and client address) in a sliding window: in memory, or in
 * Redis shared by every instance. A Redis that cannot answer rejects (the caller refuses).
 */
export class LoginLimiter {
  constructor(
    private readonly failures: EventWindow = new SlidingWindow(LOGIN_FAILURES.max, LOGIN_FAILURES.windowMs),
  ) {}

  async blocked(keys: string[], now = Date.now()): Promise<boolean> {
    const full = await Promise.all(keys.map((key) => this.failures.full(key, now)));
    return full.includes(true);
  }

  async fail(keys: string[], now = Date.now()): Promise<void> {
    await Promise.all(keys.map((key) => this.failures.add(key, now)));
  }

  async succeed(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.failures.forget(key)));
  }
}
