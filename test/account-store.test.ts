/**
 * Accounts and sessions, one suite for both dialects (test/support/dialects.ts):
 * users and their organization, password sign-in, sessions (created once with only their hash
 * stored, resolved until they expire, logged out, swept), the first admin (from the environment
 * or with the one-time setup code), and what happens when two of these race: one email created
 * twice at once, two setups with the right code at once. PostgreSQL's half skips, saying so,
 * where it is not installed.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { sha256Hex } from "../core/hash.ts";
import { PostgresAccountStore } from "../server/services/account-store-postgres.ts";
import { SqliteAccountStore } from "../server/services/account-store-sqlite.ts";
import {
  type AccountStore,
  bootstrapAdmin,
  completeSetup,
  createUser,
  SESSION_TTL_MS,
  SETUP_CODE_SHARED_MS,
  resolveSession,
  verifyPassword,
} from "../server/services/accounts.ts";
import { type DialectHarness, dialects, stopPostgres } from "./support/dialects.ts";
import { tampered } from "./support/tampered.ts";

const T0 = Date.UTC(2031, 4, 6, 12, 0, 0);
const ORG_A = { id: "org_a", slug: "clinic-a", name: "Clinic A" };
const ORG_B = { id: "org_b", slug: "clinic-b", name: "Clinic B" };
const PASSWORD = "correct horse battery staple";

type Clock = { now: number };

function accountsOf(h: DialectHarness, clock: Clock): AccountStore {
  const now = () => clock.now;
  return h.dialect === "sqlite" ? new SqliteAccountStore(h.db, now) : new PostgresAccountStore(h.db, now);
}

afterAll(stopPostgres);

const DIALECTS = dialects("the account store tests");

describe.each(DIALECTS)("accounts and sessions on $name", ({ skip, open }) => {
  const clock: Clock = { now: T0 };
  let h: DialectHarness;
  let store: AccountStore;

  beforeAll(async () => {
    if (skip) return;
    h = await open();
    store = accountsOf(h, clock);
    await h.addOrg(ORG_A);
    await h.addOrg(ORG_B);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(() => {
    clock.now += 60_000;
  });

  test.skipIf(skip)("a user with a membership; the email normalised; the same email in any case is taken", async () => {
    const before = await store.userCount();
    const created = await createUser(store, {
      email: " Ada@Example.COM ",
      password: PASSWORD,
      orgId: ORG_A.id,
      role: "admin",
    });
    if (!created.ok) throw new Error(created.error);
    expect(created.value.id).toMatch(/^usr_/);
    expect(await store.userCount()).toBe(before + 1);
    const user = (await h.rows("users")).find((u) => u.id === created.value.id);
    expect(user).toMatchObject({ email: "ada@example.com", createdAt: clock.now });
    expect(user?.passwordHash).toStartWith("$argon2id$");
    expect((await h.rows("memberships")).filter((m) => m.userId === created.value.id)).toEqual([
      { userId: created.value.id, orgId: ORG_A.id, role: "admin", createdAt: clock.now },
    ]);
    expect(
      await createUser(store, { email: "ADA@example.com", password: PASSWORD, orgId: ORG_B.id, role: "owner" }),
    ).toEqual({
      ok: false,
      error: "email_taken",
    });
    expect(await store.userCount()).toBe(before + 1);
  });

  test.skipIf(skip)("the same email created twice at once: exactly one user and one membership", async () => {
    const user = {
      email: "twice@example.com",
      passwordHash: "$argon2id$not-checked",
      orgId: ORG_A.id,
      role: "member",
    } as const;
    const results = await Promise.all([store.createUser(user), store.createUser({ ...user, orgId: ORG_B.id })]);
    expect(results.map((r) => r.ok).sort()).toEqual([false, true]);
    expect(results.find((r) => !r.ok)).toEqual({ ok: false, error: "email_taken" });
    const ids = (await h.rows("users")).filter((u) => u.email === user.email).map((u) => u.id);
    expect(ids).toHaveLength(1);
    expect((await h.rows("memberships")).filter((m) => m.userId === ids[0])).toHaveLength(1);
  });

  test.skipIf(skip)(
    "sign-in: the user's id for the right password; null for a wrong one and an unknown email",
    async () => {
      const created = await createUser(store, {
        email: "grace@example.com",
        password: PASSWORD,
        orgId: ORG_A.id,
        role: "owner",
      });
      if (!created.ok) throw new Error(created.error);
      expect(await verifyPassword(store, "GRACE@example.com ", PASSWORD)).toBe(created.value.id);
      expect(await verifyPassword(store, "grace@example.com", `${PASSWORD}!`)).toBeNull();
      expect(await verifyPassword(store, "nobody@example.com", PASSWORD)).toBeNull();
    },
  );

  test.skipIf(skip)(
    "a session: its secret returned once and only its hash stored, audited, resolved until it expires",
    async () => {
      const created = await createUser(store, {
        email: "linus@example.com",
        password: PASSWORD,
        orgId: ORG_B.id,
        role: "member",
      });
      if (!created.ok) throw new Error(created.error);
      const userId = created.value.id;
      const createdAt = clock.now;
      const session = await store.createSession(userId);
      expect(session.token).toMatch(/^hss_[0-9A-Za-z]{40}$/);
      expect(session.expiresAt).toBe(createdAt + SESSION_TTL_MS);
      const rows = (await h.rows("sessions")).filter((s) => s.userId === userId);
      expect(rows).toEqual([
        {
          id: expect.stringMatching(/^ses_/),
          hash: sha256Hex(session.token),
          userId,
          orgId: ORG_B.id,
          createdAt,
          expiresAt: session.expiresAt,
        },
      ]);
      expect(JSON.stringify(await h.rows("sessions"))).not.toContain(session.token);
      expect((await h.rows("adminAudit")).at(-1)).toMatchObject({
        orgId: ORG_B.id,
        actorKind: "user",
        actorId: userId,
        action: "session.create",
        targetId: null,
        at: createdAt,
      });

      expect(await resolveSession(store, session.token)).toEqual({
        sessionId: rows[0]?.id ?? "",
        userId,
        email: "linus@example.com",
        orgId: ORG_B.id,
        orgSlug: ORG_B.slug,
        orgName: ORG_B.name,
        role: "member",
        expiresAt: session.expiresAt,
      });
      expect(await resolveSession(store, tampered(session.token))).toBeNull();
      expect(await resolveSession(store, "hlth_not_a_session")).toBeNull();
      clock.now = session.expiresAt - 1;
      expect(await resolveSession(store, session.token)).not.toBeNull();
      clock.now = session.expiresAt;
      expect(await resolveSession(store, session.token)).toBeNull();
    },
  );

  test.skipIf(skip)("a session in a named organization; none where the user is no member", async () => {
    const created = await createUser(store, {
      email: "barbara@example.com",
      password: PASSWORD,
      orgId: ORG_A.id,
      role: "owner",
    });
    if (!created.ok) throw new Error(created.error);
    const session = await store.createSession(created.value.id, ORG_A.id);
    expect(await resolveSession(store, session.token)).toMatchObject({ orgId: ORG_A.id, role: "owner" });
    const sessions = (await h.rows("sessions")).length;
    await expect(store.createSession(created.value.id, ORG_B.id)).rejects.toThrow("user has no organization");
    await expect(store.createSession("usr_nobody")).rejects.toThrow("user has no organization");
    expect(await h.rows("sessions")).toHaveLength(sessions);
  });

  test.skipIf(skip)(
    "log out deletes the session; the sweep deletes expired sessions only, a batch at a time",
    async () => {
      const created = await createUser(store, {
        email: "edsger@example.com",
        password: PASSWORD,
        orgId: ORG_A.id,
        role: "admin",
      });
      if (!created.ok) throw new Error(created.error);
      const userId = created.value.id;
      const out = await store.createSession(userId);
      const signedIn = await resolveSession(store, out.token);
      if (signedIn === null) throw new Error("no session");
      await store.deleteSession(signedIn.sessionId);
      expect(await resolveSession(store, out.token)).toBeNull();
      await store.deleteSession(signedIn.sessionId);

      // Every session so far ends within a week of now; three more end a day later.
      const old = (await h.rows("sessions")).length;
      clock.now += 24 * 60 * 60 * 1000;
      const kept = await Promise.all([1, 2, 3].map(() => store.createSession(userId)));
      clock.now += SESSION_TTL_MS - 1;
      expect(await store.deleteExpiredSessions(2)).toBe(Math.min(2, old));
      let swept = Math.min(2, old);
      while (swept < old) swept += await store.deleteExpiredSessions(2);
      expect(await store.deleteExpiredSessions(2)).toBe(0);
      expect((await h.rows("sessions")).map((s) => s.hash).sort()).toEqual(kept.map((s) => sha256Hex(s.token)).sort());
      for (const session of kept) expect(await resolveSession(store, session.token)).toMatchObject({ userId });
    },
  );

  test.skipIf(skip)("a secret is looked up by its hash; one that cannot be a session is refused unread", async () => {
    const created = await createUser(store, {
      email: "alan@example.com",
      password: PASSWORD,
      orgId: ORG_A.id,
      role: "admin",
    });
    if (!created.ok) throw new Error(created.error);
    const session = await store.createSession(created.value.id);
    const looked: string[] = [];
    const watched: AccountStore = Object.assign(Object.create(store), {
      resolveSession: (hash: string) => {
        looked.push(hash);
        return store.resolveSession(hash);
      },
    });
    expect(await resolveSession(watched, session.token)).toMatchObject({ userId: created.value.id, orgId: ORG_A.id });
    expect(looked).toEqual([sha256Hex(session.token)]);
    expect(await resolveSession(watched, `hss_${"x".repeat(200)}`)).toBeNull();
    expect(await resolveSession(watched, session.token.replace("hss_", "hlth_"))).toBeNull();
    expect(await resolveSession(watched, "")).toBeNull();
    expect(looked).toHaveLength(1);
  });
});

describe.each(DIALECTS)("the first admin on $name", ({ skip, open }) => {
  const clock: Clock = { now: T0 };
  let h: DialectHarness;
  let store: AccountStore;

  // Each test starts with no user at all, on a database of its own.
  beforeEach(async () => {
    if (skip) return;
    h = await open();
    store = accountsOf(h, clock);
    await h.addOrg(ORG_A);
  });
  afterEach(async () => {
    await h?.close();
  });

  test.skipIf(skip)("from the environment: an owner is created once; later starts do nothing", async () => {
    expect(await bootstrapAdmin(store, ORG_A.id, { email: "Owner@Example.com", password: PASSWORD })).toEqual({
      createdAdmin: "owner@example.com",
    });
    expect(await bootstrapAdmin(store, ORG_A.id, { email: "other@example.com", password: PASSWORD })).toEqual({});
    expect(await bootstrapAdmin(store, ORG_A.id, undefined)).toEqual({});
    expect((await h.rows("memberships")).map((m) => m.role)).toEqual(["owner"]);
    expect(await h.rows("settings")).toEqual([]);
  });

  test.skipIf(skip)(
    "with the setup code: only its hash is stored, a start a minute later replaces it, and it creates one owner",
    async () => {
      const first = await bootstrapAdmin(store, ORG_A.id, undefined);
      // Within a minute of it a start keeps it (instances starting together print one code)…
      clock.now += SETUP_CODE_SHARED_MS - 1;
      expect(await bootstrapAdmin(store, ORG_A.id, undefined)).toEqual({ setupCodeElsewhere: true });
      // …and a start after that replaces it.
      clock.now += 1;
      const { setupCode } = await bootstrapAdmin(store, ORG_A.id, undefined);
      if (first.setupCode === undefined || setupCode === undefined) throw new Error("no setup code");
      expect(setupCode).toMatch(/^[0-9A-Za-z]{24}$/);
      expect(await h.rows("settings")).toEqual([
        { key: "setup_code_hash", value: sha256Hex(setupCode), updatedAt: clock.now },
      ]);
      const input = { email: "First@Example.com", password: PASSWORD };
      expect(await completeSetup(store, ORG_A.id, { ...input, code: first.setupCode })).toEqual({
        ok: false,
        error: "invalid_code",
      });
      expect(await completeSetup(store, ORG_A.id, { ...input, code: "" })).toEqual({
        ok: false,
        error: "invalid_code",
      });
      const created = await completeSetup(store, ORG_A.id, { ...input, code: setupCode });
      if (!created.ok) throw new Error(created.error);
      expect(await verifyPassword(store, "first@example.com", PASSWORD)).toBe(created.value.id);
      expect((await h.rows("memberships")).map((m) => m.role)).toEqual(["owner"]);
      expect(await h.rows("settings")).toEqual([]);
      expect(await completeSetup(store, ORG_A.id, { ...input, code: setupCode })).toEqual({
        ok: false,
        error: "already_set_up",
      });
      expect(await bootstrapAdmin(store, ORG_A.id, undefined)).toEqual({});
    },
  );

  test.skipIf(skip)("two setups at once with the right code: exactly one admin is created", async () => {
    const { setupCode } = await bootstrapAdmin(store, ORG_A.id, undefined);
    if (setupCode === undefined) throw new Error("no setup code");
    const results = await Promise.all(
      ["one", "two", "three"].map((who) =>
        completeSetup(store, ORG_A.id, { code: setupCode, email: `${who}@example.com`, password: PASSWORD }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual([
      { ok: false, error: "already_set_up" },
      { ok: false, error: "already_set_up" },
    ]);
    expect(await store.userCount()).toBe(1);
    expect(await h.rows("memberships")).toHaveLength(1);
  });

  test.skipIf(skip)("the store checks the code again when it creates the admin", async () => {
    await store.setSetupCode(sha256Hex("the-real-code"));
    const user = {
      email: "x@example.com",
      passwordHash: "$argon2id$not-checked",
      orgId: ORG_A.id,
      role: "owner",
    } as const;
    expect(await store.completeSetup("a-wrong-code", user)).toEqual({ ok: false, error: "invalid_code" });
    expect(await store.userCount()).toBe(0);
    expect(await store.findSetupCode()).toBe(sha256Hex("the-real-code"));
    expect((await store.completeSetup("the-real-code", user)).ok).toBe(true);
    expect(await store.findSetupCode()).toBeNull();
  });
});
