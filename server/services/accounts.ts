/**
 * Admins: users with an argon2id password hash (Bun.password), a role per organization, and
 * sessions whose secret is stored only as a SHA-256 hash. Sign-in never tells whether the
 * email exists, and failures are rate-limited per email and per client address.
 *
 * What a store of accounts does, whatever the database, is `AccountStore`: implementations
 * account-store-sqlite.ts (the server's) and account-store-postgres.ts, one suite over both
 * (test/account-store.test.ts). The flows over a store (sign-in, the first admin) live here, so
 * both dialects share them; password hashing, which is slow, always happens before a store's
 * transaction, never inside one. Expected failures are values; the tRPC layer turns them into errors.
 */
import { timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../../core/hash.ts";
import { newId, randomBase62 } from "../../core/ids.ts";
import { err, type Result } from "../../core/result.ts";
import type { memberships, sessions } from "../../schema/tables.ts";
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

/** A user to create: the email already normalised, the password already hashed. */
export interface NewUser {
  email: string;
  passwordHash: string;
  orgId: string;
  role: Role;
}

/** The one time the session secret exists outside the caller's hands. */
export interface CreatedSession {
  token: string;
  expiresAt: number;
}

export type SetupError = "already_set_up" | "invalid_code" | "email_taken";

export interface AccountStore {
  userCount(): Promise<number>;
  /** The user and their membership, in one transaction; of two creations of one email, one is `email_taken`. */
  createUser(user: NewUser): Promise<Result<{ id: string }, "email_taken">>;
  /** The user with this normalised email and their password hash, or null. */
  findLogin(email: string): Promise<{ id: string; passwordHash: string } | null>;
  /**
   * A new session of the user in `orgId` (a device-link approval names it), else in the user's
   * organization, audited as `session.create`. Throws if the user is no member there.
   */
  createSession(userId: string, orgId?: string): Promise<CreatedSession>;
  /** The unexpired session whose secret has this hex SHA-256, with its user, organization and role. */
  resolveSession(hash: string): Promise<SessionUser | null>;
  /** Log out; deleting a session that is already gone is not an error. */
  deleteSession(sessionId: string): Promise<void>;
  /** Deletes up to `limit` expired sessions (they are refused anyway); how many went. */
  deleteExpiredSessions(limit: number): Promise<number>;
  /** Stores the SHA-256 of a new one-time setup code, replacing any earlier one. */
  setSetupCode(hash: string): Promise<void>;
  /**
   * Stores the SHA-256 of a new setup code unless one was stored less than `freshMs` ago, in one
   * statement; whether it was stored. Of instances starting at once with no admin, one makes the code.
   */
  offerSetupCode(hash: string, freshMs: number): Promise<boolean>;
  /** The stored SHA-256 of the setup code, or null when there is none (used, or never made). */
  findSetupCode(): Promise<string | null>;
  /**
   * The first admin, with the setup code: the code is checked and used up and the user created in
   * one transaction, so of two setups at once exactly one creates an admin.
   */
  completeSetup(code: string, user: NewUser): Promise<Result<{ id: string }, SetupError>>;
}

/** The hash to look a bearer up by, or null for one that cannot be a session secret. */
export function sessionHash(secret: string): string | null {
  return secret.startsWith(SESSION_PREFIX) && secret.length <= 128 ? sha256Hex(secret) : null;
}

/**
 * Session secret → signed-in user, for the tRPC context of every console and CLI admin request.
 * A promise over SQLite too: unlike the token lookup (whose Elysia hook must stay synchronous),
 * tRPC awaits its context anyway, and a synchronous path measured no faster (bench/sessions.ts).
 */
export async function resolveSession(store: AccountStore, secret: string): Promise<SessionUser | null> {
  const hash = sessionHash(secret);
  return hash === null ? null : await store.resolveSession(hash);
}

/** A new session secret and the row that stands for it; the secret is never stored. */
export function mintSession(
  userId: string,
  orgId: string,
  now: number,
): { token: string; row: typeof sessions.$inferSelect } {
  const token = `${SESSION_PREFIX}${randomBase62(40)}`;
  const row = {
    id: newId("ses"),
    hash: sha256Hex(token),
    userId,
    orgId,
    createdAt: now,
    expiresAt: now + SESSION_TTL_MS,
  };
  return { token, row };
}

/** A setup code younger than this is kept by a start that finds it, not replaced. */
export const SETUP_CODE_SHARED_MS = 60_000;

/** The settings key of the setup code's hash. */
export const SETUP_CODE_KEY = "setup_code_hash";

/** Whether `code` is the setup code whose hex SHA-256 is stored, compared in constant time. */
export function setupCodeMatches(storedHash: string, code: string): boolean {
  const given = Buffer.from(sha256Hex(code), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return given.length === stored.length && timingSafeEqual(given, stored);
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

const hashPassword = (password: string) => Bun.password.hash(password, { algorithm: "argon2id" });

// Verified when the email is unknown, so a miss costs as long as a wrong password.
const DUMMY_HASH = await hashPassword("health-dummy-password-for-timing");

export async function createUser(
  store: AccountStore,
  input: { email: string; password: string; orgId: string; role: Role },
): Promise<Result<{ id: string }, "email_taken">> {
  const passwordHash = await hashPassword(input.password);
  return store.createUser({ email: normalizeEmail(input.email), passwordHash, orgId: input.orgId, role: input.role });
}

/** Checks a password; the same answer and about the same time whether or not the email exists. */
export async function verifyPassword(
  store: AccountStore,
  emailInput: string,
  password: string,
): Promise<string | null> {
  const user = await store.findLogin(normalizeEmail(emailInput));
  const valid = await Bun.password.verify(password, user?.passwordHash ?? DUMMY_HASH);
  return valid && user ? user.id : null;
}

/**
 * First admin: from HEALTH_ADMIN_EMAIL/PASSWORD, or with neither, a one-time setup code whose
 * hash is stored and whose plaintext is returned to print. No default password, ever.
 */
export async function bootstrapAdmin(
  store: AccountStore,
  orgId: string,
  admin: { email: string; password: string } | undefined,
): Promise<{ setupCode?: string; setupCodeElsewhere?: true; createdAdmin?: string }> {
  if ((await store.userCount()) > 0) return {};
  if (admin) {
    // Instances starting at once on PostgreSQL with the same admin create it once; the others
    // find the email taken and report nothing.
    const created = await createUser(store, { ...admin, orgId, role: "owner" });
    return created.ok ? { createdAdmin: normalizeEmail(admin.email) } : {};
  }
  const code = randomBase62(24);
  // Instances starting together print one code between them: a code made by another in the last
  // minute is kept (only one hash is stored, so replacing it would void the code it printed).
  if (!(await store.offerSetupCode(sha256Hex(code), SETUP_CODE_SHARED_MS))) return { setupCodeElsewhere: true };
  return { setupCode: code };
}

export async function completeSetup(
  store: AccountStore,
  orgId: string,
  input: { code: string; email: string; password: string },
): Promise<Result<{ id: string }, SetupError>> {
  // Both answered before the password is hashed: setup is unauthenticated, and a wrong code must
  // cost no argon2 hash. The store checks both again in the transaction that creates the admin.
  if ((await store.userCount()) > 0) return err("already_set_up");
  const stored = await store.findSetupCode();
  if (stored === null || !setupCodeMatches(stored, input.code)) return err("invalid_code");
  const passwordHash = await hashPassword(input.password);
  return store.completeSetup(input.code, { email: normalizeEmail(input.email), passwordHash, orgId, role: "owner" });
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
